//! What a run knows of the schedule that started it: its name (from
//! `LINERATE_SCHEDULE`), and how it tells its schedule that the server's
//! path was held by another schedule's test (docs/protocol.md#path-hold).

/// The exit status of a run whose server refused it because another
/// scheduled test holds its path (EX_TEMPFAIL: try again later); the
/// schedule waits and tries again within the test's limit.
pub const PATH_HELD_STATUS: i32 = 75;

/// The scheduled test this process runs as (`SCHEDULE/TEST`, from
/// `LINERATE_SCHEDULE`), if a schedule started it.
pub fn scheduled_as() -> Option<String> {
    std::env::var("LINERATE_SCHEDULE")
        .ok()
        .filter(|name| !name.is_empty())
}

/// Whether `e` is a server's refusal because another scheduled test holds
/// its path.
pub fn path_held(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<linerate_engine::EngineError>(),
            Some(linerate_engine::EngineError::Refused(r))
                if r.code == linerate_wire::RefusalCode::PathHeld
        )
    })
}
