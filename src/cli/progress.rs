//! What the grading commands show while they run: notes on stderr and a progress bar with ETA
//! and running tallies (hidden when stderr is not a terminal, or with --quiet).

use super::note;
use beyondswe::grade::Outcome;
use beyondswe::run::{JobEvent, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) struct Bar {
    bar: ProgressBar,
    quiet: bool,
    resolved: AtomicUsize,
    unresolved: AtomicUsize,
    errors: AtomicUsize,
    cached: AtomicUsize,
}

impl Bar {
    pub(crate) fn new(quiet: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta}  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Bar {
            bar,
            quiet,
            resolved: AtomicUsize::new(0),
            unresolved: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
        }
    }
}

impl Progress for Bar {
    fn note(&self, message: &str) {
        self.bar.suspend(|| note(message));
    }

    fn start(&self, total: usize) {
        self.bar.set_length(total as u64);
        if !self.quiet {
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
            JobEvent::Graded { stored, .. } => stored,
        };
        let counter = match stored.verdict.verdict {
            Outcome::Resolved => &self.resolved,
            Outcome::Unresolved => &self.unresolved,
            Outcome::Error => &self.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.bar.set_message(format!(
            "resolved {}  unresolved {}  error {}  (cached {})",
            self.resolved.load(Ordering::Relaxed),
            self.unresolved.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.cached.load(Ordering::Relaxed)
        ));
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
