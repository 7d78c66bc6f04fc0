//! A server on its own thread, for use in process (the demo, tests): bound
//! before it starts, so its address is known before anyone connects, and
//! stopped and joined when it is stopped or dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;

use linerate_engine::{EngineError, Result};

use crate::Server;

/// A server running on a thread of this process.
pub struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Running {
    /// Runs `server` (bound already, port 0 allowed) until stopped.
    pub fn start(server: Server) -> Result<Running> {
        let addr = server.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("linerate-server".into())
                .spawn(move || server.run(false, &stop))
                .map_err(|e| EngineError::io("starting the server's thread", e))?
        };
        Ok(Running {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops it and gives how it ended.
    pub fn stop(mut self) -> Result<()> {
        self.end()
    }

    fn end(&mut self) -> Result<()> {
        self.stop.store(true, Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(ended)) => ended,
            Some(Err(_)) => Err(EngineError::Panicked("the server")),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.end();
    }
}
