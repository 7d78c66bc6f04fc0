//! A lab for one test, taken down however the test ends.

use std::process::{Command, Stdio};

use std::time::{Duration, Instant};

use super::{Guard, linerate, run};

/// A lab that is taken down when the test ends, pass or fail.
pub struct TestLab {
    pub name: String,
}

impl TestLab {
    pub fn up(tag: &str, extra: &[&str]) -> TestLab {
        let name = format!("{tag}{}", std::process::id() % 1000);
        let mut args = vec!["lab", "up", "--name", &name];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "lab up: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        TestLab { name }
    }

    pub fn addr(&self, host: &str, v6: bool) -> String {
        let mut args = vec!["lab", "addr", "--name", &self.name, host];
        if v6 {
            args.push("-6");
        }
        let out = run(&args);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn exec(&self, host: &str, cmd: &[&str]) -> std::process::Output {
        let mut args = vec!["lab", "exec", "--name", &self.name, host, "--"];
        args.extend_from_slice(cmd);
        run(&args)
    }

    pub fn spawn(&self, host: &str, cmd: &[&str]) -> Guard {
        let child = super::linerate_cmd()
            .args(["lab", "exec", "--name", &self.name, host, "--"])
            .args(cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn in lab");
        Guard(child)
    }

    /// A linerate server in `host` on `port`, returned once it listens.
    pub fn serve(&self, host: &str, port: u16) -> Guard {
        let port_text = port.to_string();
        let g = self.spawn(host, &[linerate(), "serve", "--port", &port_text]);
        let ns = self.netns(host);
        let filter = format!("sport = :{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let out = Command::new("ip")
                .args(["netns", "exec", &ns, "ss", "-Hltn", &filter])
                .output()
                .expect("ss");
            if !String::from_utf8_lossy(&out.stdout).trim().is_empty() {
                return g;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no server listened on {host}:{port} within 20 s");
    }

    /// The namespace `host` lives in.
    pub fn netns(&self, host: &str) -> String {
        format!("lr-{}-{host}", self.name)
    }

    /// Waits until `host` holds no connection on `port` open: its server
    /// has ended the last session and takes the next one alone.
    pub fn wait_idle(&self, host: &str, port: u16) {
        let ns = self.netns(host);
        let filter = format!("( sport = :{port} )");
        let ss = [
            "ss",
            "-tnH",
            "state",
            "connected",
            "exclude",
            "time-wait",
            &filter,
        ];
        let idle = || super::output_in(Some(&ns), &ss).trim().is_empty();
        assert!(
            super::wait_until(Duration::from_secs(30), idle),
            "{host}:{port} kept a connection open"
        );
    }

    pub fn status(&self) -> serde_json::Value {
        let out = run(&["lab", "status", "--name", &self.name, "--json"]);
        assert!(out.status.success());
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()[0].clone()
    }

    pub fn set(&self, extra: &[&str]) {
        let mut args = vec!["lab", "set", "--name", &self.name];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "lab set: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn namespaces(&self) -> Vec<String> {
        let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&format!("lr-{}-", self.name)))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--name", &self.name]);
    }
}
