//! Runs the whole-process figures on A (and B, alternating run by run) and renders them as
//! the report's Markdown tables.

use std::time::Duration;

use super::Plan;
use super::machine;
use super::process::RuntimeCommand;
use super::process_figures::{self as figures, NO_FSYNC_ENV, Services};
use super::stats::{Figure, Side, percentile, ratios, sorted, summary};

const MB: f64 = 1_000_000.0;

/// Every whole-process figure of `a` (and `b`), as Markdown (machine info first).
pub(super) fn whole_process(
    a: &RuntimeCommand,
    b: Option<&RuntimeCommand>,
    plan: Plan,
    timeout: Duration,
) -> anyhow::Result<String> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let machine = machine::describe();
    let figures = tokio.block_on(measure(a, b, plan, timeout))?;
    let mut text = String::from("# Benchmark report\n\n## Machine\n\n");
    text.push_str(&machine);
    text.push_str(&format!(
        "\nA = `{}`{}\n\n",
        a.display(),
        b.map_or_else(String::new, |b| format!(", B = `{}`", b.display()))
    ));
    text.push_str(&format!(
        "## Whole process (alternating runs; load average at the end: {})\n\n",
        machine::load_average()
    ));
    text.push_str(&table(&figures, b.is_some()));
    text.push_str(&format!(
        "\nSamples: {} cold starts, {} CreateSessions, {} × {}-step tasks per fsync setting, \
         {} × {}-step long sessions, {} × {} streamed chunks. Per-step time = (StartTask sent → \
         task_completed read − the fake gateway's own time) / gateway requests. The fsync line \
         is the difference between runs with and without `{NO_FSYNC_ENV}=1` (a runtime that \
         ignores the variable shows ≈ 0). Peak RSS is `VmHWM` (Linux only).\n\n",
        plan.cold_starts,
        plan.create_sessions,
        plan.step_runs,
        plan.steps,
        plan.memory_runs,
        plan.memory_steps,
        plan.stream_runs,
        plan.chunks,
    ));
    Ok(text)
}

/// Which side runs first in sample `i`: alternate, so neither always gets the warm caches.
fn order(i: usize, b: bool) -> Vec<Side> {
    match (b, i % 2) {
        (false, _) => vec![Side::A],
        (true, 0) => vec![Side::A, Side::B],
        (true, _) => vec![Side::B, Side::A],
    }
}

async fn measure(
    a: &RuntimeCommand,
    b: Option<&RuntimeCommand>,
    plan: Plan,
    timeout: Duration,
) -> anyhow::Result<Vec<Figure>> {
    let run = Run {
        a,
        b,
        services: Services::start().await?,
        timeout,
    };
    let mut figures = start_ups(&run, plan).await?;
    figures.extend(steps(&run, plan).await?);
    figures.extend(long_sessions(&run, plan).await?);
    figures.extend(streaming(&run, plan).await?);
    Ok(figures)
}

/// The runtimes measured, side by side, against one set of fakes.
struct Run<'a> {
    a: &'a RuntimeCommand,
    b: Option<&'a RuntimeCommand>,
    services: Services,
    timeout: Duration,
}

impl Run<'_> {
    fn command(&self, side: Side) -> &RuntimeCommand {
        match (side, self.b) {
            (Side::B, Some(b)) => b,
            _ => self.a,
        }
    }
}

/// Start-up to the first answer and to CreateSession, with the peak RSS at each.
async fn start_ups(run: &Run<'_>, plan: Plan) -> anyhow::Result<Vec<Figure>> {
    let mut cold = Figure::new(
        "spawn → GetSessionState answered",
        "ms",
        Some((5.0, "≤ 5 ms")),
    );
    let mut start_rss = Figure::new("peak RSS at that first answer (no session yet)", "MB", None);
    let mut create = Figure::new("spawn → CreateSession answered", "ms", None);
    let mut idle_rss = Figure::new(
        "peak RSS after CreateSession",
        "MB",
        Some((10.0, "≤ 10 MB")),
    );
    println!("xtask: cold starts");
    for i in 0..plan.cold_starts {
        for side in order(i, run.b.is_some()) {
            let (ms, rss) =
                figures::cold_start(run.command(side), &run.services, run.timeout).await?;
            cold.push(side, ms);
            if let Some(rss) = rss {
                start_rss.push(side, rss as f64 / MB);
            }
        }
    }
    for i in 0..plan.create_sessions {
        for side in order(i, run.b.is_some()) {
            let (ms, rss) =
                figures::create_session(run.command(side), &run.services, run.timeout).await?;
            create.push(side, ms);
            if let Some(rss) = rss {
                idle_rss.push(side, rss as f64 / MB);
            }
        }
    }

    Ok(vec![cold, start_rss, create, idle_rss])
}

/// A task's steps, with and without the checkpoint's fsync.
async fn steps(run: &Run<'_>, plan: Plan) -> anyhow::Result<Vec<Figure>> {
    println!("xtask: {}-step tasks", plan.steps);
    let mut with_fsync = Figure::new(
        "per step, runtime time excluding the fake gateway (with checkpoint fsync)",
        "ms",
        None,
    );
    let mut without_fsync = Figure::new(
        "per step, runtime time excluding the fake gateway and the checkpoint fsync",
        "ms",
        Some((1.0, "≤ 1 ms")),
    );
    let mut fsync = Figure::new("checkpoint fsync per step", "ms", None);
    let mut fake = Figure::new("fake gateway's own time per request", "ms", None);
    for i in 0..plan.step_runs {
        for side in order(i, run.b.is_some()) {
            let durable = figures::tool_steps(
                run.command(side),
                &run.services,
                plan.steps,
                false,
                run.timeout,
            )
            .await?;
            let fast = figures::tool_steps(
                run.command(side),
                &run.services,
                plan.steps,
                true,
                run.timeout,
            )
            .await?;
            with_fsync.push(side, durable.per_step_ms);
            without_fsync.push(side, fast.per_step_ms);
            fsync.push(side, (durable.per_step_ms - fast.per_step_ms).max(0.0));
            fake.push(side, durable.fake_ms);
        }
    }

    Ok(vec![with_fsync, without_fsync, fsync, fake])
}

/// A long session's peak RSS against its limit and against a one-step task.
async fn long_sessions(run: &Run<'_>, plan: Plan) -> anyhow::Result<Vec<Figure>> {
    println!("xtask: long sessions ({} steps)", plan.memory_steps);
    let mut long_rss = Figure::new(
        "peak RSS after a long session (see thread size)",
        "MB",
        None,
    );
    let mut limit = Figure::new("its limit: 2 × thread bytes + 10 MB", "MB", None);
    let mut messages = Figure::new("messages in that session's thread", "", None);
    // The limit is a fixed part (10 MB) and a part per thread byte (2×). A one-step task
    // shows what running any task costs; the long session's excess over it, per byte of
    // thread it added, is what the thread costs.
    let mut short_rss = Figure::new(
        "peak RSS after a 1-step task (a thread of a few KB)",
        "MB",
        None,
    );
    let mut growth = Figure::new(
        "RSS growth from that task to the long session, per byte the thread grew",
        "×",
        Some((2.0, "≤ 2×")),
    );
    for i in 0..plan.memory_runs {
        for side in order(i, run.b.is_some()) {
            let long = figures::tool_steps(
                run.command(side),
                &run.services,
                plan.memory_steps,
                false,
                run.timeout,
            )
            .await?;
            let short =
                figures::tool_steps(run.command(side), &run.services, 1, false, run.timeout)
                    .await?;
            if let Some(rss) = long.peak_rss {
                long_rss.push(side, rss as f64 / MB);
            }
            if let Some(rss) = short.peak_rss {
                short_rss.push(side, rss as f64 / MB);
            }
            let added = long.thread_bytes.saturating_sub(short.thread_bytes);
            if let (Some(long_peak), Some(short_peak), true) =
                (long.peak_rss, short.peak_rss, added > 0)
            {
                growth.push(side, (long_peak as f64 - short_peak as f64) / added as f64);
            }
            limit.push(side, (2 * long.thread_bytes) as f64 / MB + 10.0);
            messages.push(side, long.thread_messages as f64);
        }
    }

    Ok(vec![messages, long_rss, limit, short_rss, growth])
}

/// `text_chunk` latency percentiles.
async fn streaming(run: &Run<'_>, plan: Plan) -> anyhow::Result<Vec<Figure>> {
    println!("xtask: streaming {} chunks", plan.chunks);
    let mut p50 = Figure::new(
        "text_chunk latency p50 (chunk written → line read)",
        "ms",
        None,
    );
    let mut p99 = Figure::new(
        "text_chunk latency p99 (chunk written → line read)",
        "ms",
        Some((1.0, "≤ 1 ms")),
    );
    let mut max = Figure::new("text_chunk latency max", "ms", None);
    for i in 0..plan.stream_runs {
        for side in order(i, run.b.is_some()) {
            let latencies = sorted(
                &figures::streaming(run.command(side), &run.services, plan.chunks, run.timeout)
                    .await?,
            );
            p50.push(side, percentile(&latencies, 50.0).unwrap_or(f64::NAN));
            p99.push(side, percentile(&latencies, 99.0).unwrap_or(f64::NAN));
            max.push(side, latencies.last().copied().unwrap_or(f64::NAN));
        }
    }
    Ok(vec![p50, p99, max])
}

fn value(v: f64, unit: &str) -> String {
    let number = if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

fn cells(values: &[f64], unit: &str) -> String {
    match summary(values) {
        Some(s) => format!(
            "{} | {}–{}",
            value(s.median, unit),
            value(s.min, ""),
            value(s.max, unit)
        ),
        None => "n/a | n/a".to_owned(),
    }
}

fn table(figures: &[Figure], peer: bool) -> String {
    let mut text = if peer {
        String::from(
            "| figure | target | A median | A min–max | B median | B min–max | A/B median (min–max, pair by pair) |\n|---|---|---|---|---|---|---|\n",
        )
    } else {
        String::from("| figure | target | median | min–max |\n|---|---|---|---|\n")
    };
    for figure in figures {
        let target = match &figure.target {
            Some((limit, label)) => match summary(&figure.a) {
                Some(s) if s.median <= *limit => format!("{label} ✓"),
                Some(_) => format!("{label} ✗"),
                None => label.clone(),
            },
            None => String::new(),
        };
        text.push_str(&format!(
            "| {} | {target} | {}",
            figure.name,
            cells(&figure.a, figure.unit)
        ));
        if peer {
            let ratio = ratios(&figure.a, &figure.b).map_or_else(
                || "n/a".to_owned(),
                |r| format!("{:.2}× ({:.2}–{:.2})", r.median, r.min, r.max),
            );
            text.push_str(&format!(" | {} | {ratio}", cells(&figure.b, figure.unit)));
        }
        text.push_str(" |\n");
    }
    text
}
