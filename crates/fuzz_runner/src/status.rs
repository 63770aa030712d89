//! The live status line: on a terminal, the last line of stderr shows how many jobs are
//! waiting, running, done and failed, and the elapsed time; output lines are printed above it.
//! Without a terminal (CI logs, pipes) nothing but the plain output lines is written.

use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub total: usize,
    pub running: usize,
    pub done: usize,
    pub failed: usize,
}

impl Counts {
    pub(crate) fn render(&self, secs: u64) -> String {
        let waiting = self
            .total
            .saturating_sub(self.running)
            .saturating_sub(self.done);
        format!(
            "fuzz run: {waiting} waiting, {} running, {} done, {} failed · {}:{:02}",
            self.running,
            self.done - self.failed.min(self.done),
            self.failed,
            secs / 60,
            secs % 60
        )
    }
}

pub(crate) struct StatusLine {
    enabled: bool,
    start: Instant,
    state: Mutex<(Counts, bool)>,
}

impl StatusLine {
    pub(crate) fn new(enabled: bool, total: usize) -> Self {
        StatusLine {
            enabled,
            start: Instant::now(),
            state: Mutex::new((
                Counts {
                    total,
                    ..Counts::default()
                },
                false,
            )),
        }
    }

    fn draw(&self, err: &mut impl Write, counts: &Counts) {
        let line = counts.render(self.start.elapsed().as_secs());
        let _ = write!(err, "\r\x1b[K{line}");
        let _ = err.flush();
    }

    /// Print one output line (to stderr or stdout), keeping the status line below it.
    pub(crate) fn print(&self, line: &[u8], stderr: bool) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let mut err = std::io::stderr().lock();
        if self.enabled && st.1 {
            let _ = err.write_all(b"\r\x1b[K");
        }
        if stderr {
            let _ = err.write_all(line);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line);
            let _ = out.flush();
        }
        if self.enabled {
            self.draw(&mut err, &st.0);
            st.1 = true;
        }
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut Counts)) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        f(&mut st.0);
        if self.enabled {
            self.draw(&mut std::io::stderr().lock(), &st.0);
            st.1 = true;
        }
    }

    /// Redraw (the elapsed time moves on).
    pub(crate) fn tick(&self) {
        self.update(|_| {});
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn clear(&self) {
        if let Ok(mut st) = self.state.lock() {
            if self.enabled && st.1 {
                let _ = std::io::stderr().lock().write_all(b"\r\x1b[K");
                st.1 = false;
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn counts(&self) -> Counts {
        self.state.lock().map(|s| s.0).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_waiting_running_done_and_failed() {
        let c = Counts {
            total: 5,
            running: 1,
            done: 3,
            failed: 1,
        };
        assert_eq!(
            c.render(75),
            "fuzz run: 1 waiting, 1 running, 2 done, 1 failed · 1:15"
        );
    }

    #[test]
    fn updates_change_the_counts() {
        let s = StatusLine::new(false, 2);
        s.update(|c| c.running += 1);
        s.update(|c| {
            c.running -= 1;
            c.done += 1;
        });
        assert_eq!(
            s.counts(),
            Counts {
                total: 2,
                running: 0,
                done: 1,
                failed: 0
            }
        );
    }
}
