//! What the grading commands show while they run: notes on stderr, and progress: a bar with the
//! running tallies when stderr is a terminal, else (CI, a log file) a line every ten seconds.
//! The time left is estimated from the gradings finished in this run only: verdicts kept from
//! an earlier run (cached) arrive at once and would make it swing.

use super::note;
use beyondswe::grade::Outcome;
use beyondswe::run::{JobEvent, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a progress line is written when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(10);

pub(crate) struct Bar {
    bar: ProgressBar,
    quiet: bool,
    /// Lines instead of a bar: stderr is not a terminal.
    lines: bool,
    total: AtomicUsize,
    done: AtomicUsize,
    graded: AtomicUsize,
    resolved: AtomicUsize,
    unresolved: AtomicUsize,
    errors: AtomicUsize,
    cached: AtomicUsize,
    /// When the run started, and when the last progress line was written.
    clock: Mutex<Option<(Instant, Instant)>>,
}

impl Bar {
    pub(crate) fn new(quiet: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len}  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Bar {
            bar,
            quiet,
            lines: !std::io::stderr().is_terminal(),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            graded: AtomicUsize::new(0),
            resolved: AtomicUsize::new(0),
            unresolved: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            clock: Mutex::new(None),
        }
    }

    /// The tallies and the time left, as the bar's message and the progress lines say them.
    fn status(&self, started: Instant) -> String {
        let (total, done) = (
            self.total.load(Ordering::Relaxed),
            self.done.load(Ordering::Relaxed),
        );
        let tallies = format!(
            "resolved {}  unresolved {}  error {}  (cached {})",
            self.resolved.load(Ordering::Relaxed),
            self.unresolved.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.cached.load(Ordering::Relaxed)
        );
        match eta(
            started.elapsed(),
            self.graded.load(Ordering::Relaxed),
            total - done.min(total),
        ) {
            Some(left) => format!("{tallies}  about {} left", human(left)),
            None => tallies,
        }
    }
}

/// The time left from this run's finished gradings: their mean pace times what is left; `None`
/// before the first one finishes.
fn eta(elapsed: Duration, graded: usize, left: usize) -> Option<Duration> {
    (graded > 0).then(|| elapsed.mul_f64(left as f64 / graded as f64))
}

/// `1h02m`, `3m05s`, `12s`.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

impl Progress for Bar {
    fn note(&self, message: &str) {
        self.bar.suspend(|| note(message));
    }

    fn start(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        self.bar.set_length(total as u64);
        let now = Instant::now();
        if let Ok(mut c) = self.clock.lock() {
            *c = Some((now, now));
        }
        if !self.quiet && !self.lines {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar
                .enable_steady_tick(std::time::Duration::from_millis(200));
        }
    }

    fn event(&self, event: &JobEvent) {
        let stored = match event {
            JobEvent::Cached(s) => {
                self.cached.fetch_add(1, Ordering::Relaxed);
                s
            }
            JobEvent::Graded { stored, .. } => {
                self.graded.fetch_add(1, Ordering::Relaxed);
                stored
            }
        };
        let counter = match stored.verdict.verdict {
            Outcome::Resolved => &self.resolved,
            Outcome::Unresolved => &self.unresolved,
            Outcome::Error => &self.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let Ok(mut clock) = self.clock.lock() else {
            return;
        };
        let Some((started, last)) = clock.as_mut() else {
            return;
        };
        let status = self.status(*started);
        self.bar.set_message(status.clone());
        self.bar.inc(1);
        let total = self.total.load(Ordering::Relaxed);
        if self.lines && !self.quiet && (last.elapsed() >= LINE_EVERY || done == total) {
            *last = Instant::now();
            note(format!("[progress] {done}/{total}  {status}"));
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_comes_from_finished_gradings_only() {
        assert_eq!(eta(Duration::from_secs(60), 0, 10), None);
        // 3 graded in 60 s: 20 s each, 6 left → 2 min, however many were cached.
        assert_eq!(
            eta(Duration::from_secs(60), 3, 6),
            Some(Duration::from_secs(120))
        );
        assert_eq!(human(Duration::from_secs(125)), "2m05s");
        assert_eq!(human(Duration::from_secs(3 * 3600 + 120)), "3h02m");
        assert_eq!(human(Duration::from_secs(9)), "9s");
    }
}
