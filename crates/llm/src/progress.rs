//! Progress of a batch: an indicatif bar on a terminal, else a plain line every 30 s.

use crate::client::{Stats, Transport};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Progress of a batch: an indicatif bar on a terminal (done, cached, failed and in flight
/// apart), else a plain line every 30 s for long batches.
pub(crate) struct Progress {
    stop: Arc<tokio::sync::Notify>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

/// Tokens per second received, over the last few seconds.
struct Rate {
    samples: std::collections::VecDeque<(Instant, u64)>,
}

impl Rate {
    /// How far back the rate looks.
    const SPAN: Duration = Duration::from_secs(10);
    fn new(count: u64) -> Rate {
        Rate {
            samples: std::iter::once((Instant::now(), count)).collect(),
        }
    }
    fn update(&mut self, count: u64) -> f64 {
        let now = Instant::now();
        self.samples.push_back((now, count));
        while self.samples.len() > 2 && now - self.samples[0].0 > Self::SPAN {
            self.samples.pop_front();
        }
        let (t, c) = self.samples[0];
        let secs = (now - t).as_secs_f64();
        if secs < 0.5 {
            0.0
        } else {
            count.saturating_sub(c) as f64 / secs
        }
    }
}

impl Progress {
    pub(crate) fn start(
        rt: &tokio::runtime::Runtime,
        stats: Arc<Stats>,
        len: usize,
        t: &Transport,
    ) -> Progress {
        let stop = Arc::new(tokio::sync::Notify::new());
        // a batch of one (a task regenerated after validation) may take minutes on a small
        // local model: it reports too
        if len == 0 {
            return Progress { stop, handle: None };
        }
        let base = (
            Stats::get(&stats.cached),
            Stats::get(&stats.attempts_failed),
            Stats::get(&stats.sent),
        );
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let limit = t.concurrency();
        let flag = stop.clone();
        let handle = rt.spawn(async move {
            let pb = indicatif::ProgressBar::new(len as u64);
            if tty {
                pb.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix:>9} [{bar:30}] {pos}/{len} {elapsed} {msg}",
                    )
                    .expect("template")
                    .progress_chars("=> "),
                );
                pb.set_prefix("llm");
            } else {
                pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            let t0 = Instant::now();
            let mut last_line = Instant::now();
            let mut rate = Rate::new(Stats::get(&stats.received_pieces));
            loop {
                let done = Stats::get(&stats.batch_done);
                let msg = format!(
                    "done {done} · cached {} · failed {} · in flight {} (limit {limit}) · sent {} · {:.0} tok/s",
                    Stats::get(&stats.cached) - base.0,
                    Stats::get(&stats.attempts_failed) - base.1,
                    Stats::get(&stats.in_flight),
                    Stats::get(&stats.sent) - base.2,
                    rate.update(Stats::get(&stats.received_pieces))
                );
                pb.set_position(done);
                pb.set_message(msg.clone());
                if !tty && last_line.elapsed() >= Duration::from_secs(30) {
                    eprintln!(
                        "llm: {done}/{len} after {:.0}s: {msg}",
                        t0.elapsed().as_secs_f64()
                    );
                    last_line = Instant::now();
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = flag.notified() => break,
                }
            }
            pb.finish_and_clear();
        });
        Progress {
            stop,
            handle: Some(handle),
        }
    }
    pub(crate) fn stop(mut self) {
        self.stop.notify_one();
        if let Some(h) = self.handle.take() {
            // the bar clears itself within one tick
            let deadline = Instant::now() + Duration::from_millis(500);
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}
