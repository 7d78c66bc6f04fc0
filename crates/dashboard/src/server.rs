//! Answers the dashboard's requests: each reads the archive afresh (the
//! archive is the only state; many processes write it), builds the board
//! and draws the page asked for. GET and HEAD only: nothing changes the
//! archive from here.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use linerate_archive::{Location, Store};
use linerate_report::history_figures::{SeriesHistory, figure};

use crate::board::{Board, Staleness};
use crate::{DashboardError, metrics, pages};

/// What the dashboard shows.
#[derive(Debug, Clone)]
pub struct Dashboard {
    /// The archive it reads.
    pub location: Location,
    /// How far back a series' latest run may be to be shown, seconds.
    pub period_seconds: f64,
    /// When a series counts as stale.
    pub staleness: Staleness,
}

/// One answer: status, content type and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// Its content type.
    pub content_type: &'static str,
    /// Its body.
    pub body: String,
}

const HTML: &str = "text/html; charset=utf-8";

impl Answer {
    fn html(status: u16, body: String) -> Answer {
        Answer {
            status,
            content_type: HTML,
            body,
        }
    }
}

impl Dashboard {
    /// The answer to a GET of `target` (a path and maybe a query) at `now`
    /// (seconds since the epoch).
    pub fn answer(&self, target: &str, now: f64) -> Answer {
        let path = target.split(['?', '#']).next().unwrap_or("/");
        match self.answer_path(path, now) {
            Ok(answer) => answer,
            Err(error) => Answer {
                status: 503,
                content_type: "text/plain; charset=utf-8",
                body: format!("linerate dashboard: {error}\n"),
            },
        }
    }

    fn answer_path(&self, path: &str, now: f64) -> Result<Answer, DashboardError> {
        let Some(mut archive) = self.open()? else {
            return Ok(Answer::html(
                200,
                pages::not_found(&format!(
                    "No archive at {} yet: runs record there as they end.",
                    self.location.shown()
                )),
            ));
        };
        let only = path.strip_prefix("/series/");
        let board = Board::read(
            archive.as_mut(),
            (now - self.period_seconds, only),
            now,
            self.staleness,
        )?;
        Ok(match path {
            "/" | "/index.html" => Answer::html(200, pages::grid(&board)),
            "/metrics" => Answer {
                status: 200,
                content_type: metrics::CONTENT_TYPE,
                body: metrics::render(&board),
            },
            "/regressions" => Answer::html(200, regressions(archive.as_mut(), &board)?),
            _ => match path.strip_prefix("/series/") {
                Some(id) => series_page(archive.as_mut(), &board, id)?,
                None => Answer::html(404, pages::not_found(&format!("Nothing at {path}."))),
            },
        })
    }

    /// The archive, or `None` where an SQLite file is not there yet (a
    /// read-only view does not create one).
    fn open(&self) -> Result<Option<Box<dyn Store>>, DashboardError> {
        if let Location::Sqlite(path) = &self.location
            && !path.exists()
        {
            return Ok(None);
        }
        Ok(linerate_archive::open(&self.location)?)
    }
}

fn history_of(
    archive: &mut dyn Store,
    s: &crate::SeriesState,
) -> Result<Option<SeriesHistory>, DashboardError> {
    let judged = linerate_archive::judged_history(archive, &s.summary.id, s.summary.unit)?;
    Ok(SeriesHistory::of(&s.summary, &judged))
}

fn series_page(archive: &mut dyn Store, board: &Board, id: &str) -> Result<Answer, DashboardError> {
    let Some(s) = board.series.iter().find(|s| s.summary.id == id) else {
        return Ok(Answer::html(
            404,
            pages::not_found(&format!("No series {id} in this period.")),
        ));
    };
    let Some(history) = history_of(archive, s)? else {
        return Ok(Answer::html(
            404,
            pages::not_found("The series has no figure."),
        ));
    };
    let first = pages::when(history.runs[0].at);
    let drawn = figure(&history, &first)?;
    Ok(Answer::html(
        200,
        pages::series(board, s, &history, &drawn.svg),
    ))
}

fn regressions(archive: &mut dyn Store, board: &Board) -> Result<String, DashboardError> {
    let mut named = Vec::new();
    for s in &board.series {
        if let Some(history) = history_of(archive, s)? {
            let current = s.state != crate::CellState::Stale;
            named.extend(pages::named_in(&history, s.summary.unit, current));
        }
    }
    named.sort_by(|a, b| b.first_at.total_cmp(&a.first_at));
    Ok(pages::regressions(board, &named))
}

/// A listening dashboard.
pub struct Listening {
    server: tiny_http::Server,
    /// The address it listens on (its port, where 0 was asked).
    pub address: SocketAddr,
}

/// Listens on `address`.
pub fn bind(address: SocketAddr) -> Result<Listening, DashboardError> {
    let server = tiny_http::Server::http(address).map_err(|e| DashboardError::Listen {
        address,
        error: std::io::Error::other(e.to_string()),
    })?;
    let bound = server.server_addr().to_ip().unwrap_or(address);
    Ok(Listening {
        server,
        address: bound,
    })
}

/// Answers requests on `listening` until `stop` is set; `now` gives the
/// time of each request (seconds since the epoch).
pub fn serve(
    listening: &Listening,
    dashboard: &Dashboard,
    stop: &AtomicBool,
    now: &dyn Fn() -> f64,
) {
    while !stop.load(Ordering::Relaxed) {
        let request = match listening.server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => continue,
        };
        let answer = match request.method() {
            tiny_http::Method::Get | tiny_http::Method::Head => {
                dashboard.answer(request.url(), now())
            }
            _ => Answer {
                status: 405,
                content_type: "text/plain; charset=utf-8",
                body: "The dashboard is read-only: GET and HEAD only.\n".to_string(),
            },
        };
        let header = |name: &str, value: &str| {
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
        };
        let mut response =
            tiny_http::Response::from_string(answer.body).with_status_code(answer.status);
        for h in [
            header("Content-Type", answer.content_type),
            header("Cache-Control", "no-store"),
            header("X-Content-Type-Options", "nosniff"),
        ]
        .into_iter()
        .flatten()
        {
            response.add_header(h);
        }
        // A client gone before its answer harms nothing here.
        let _ = request.respond(response);
    }
}
