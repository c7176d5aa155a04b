//! `mock-services`: starts every fake on loopback and prints the environment a runtime needs
//! to use them, so a human can try a runtime by hand. Runs until Ctrl-C, echoing each request
//! the fakes receive on stderr.

use agent_mocks::FaultControl;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use agent_mocks::script::parse_script;
use agent_mocks::{Fakes, GatewayReply, Nulls, RecordedRequest};
use anyhow::Context;
use clap::Parser;

/// Start the fake LLM Gateway, Session, Workspace, Approval, Audit and Telemetry Services on
/// loopback ports.
///
/// Paste the printed `export` lines into the shell that starts the runtime.
///
/// SCRIPT FILE: a JSON array of gateway replies, answered in order, one per LLM request:
///
///   [ {"text": "Hello! What should I do?"},
///     {"toolCalls": [{"id": "call_1", "name": "ReadFile", "arguments": {"path": "README.md"}}],
///      "text": "optional text before the calls"},
///     {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": "rate limited"}},
///     {"rawSse": ["{\"choices\":[]}", "[DONE]"]} ]
///
/// `text` replies stream in several chunks with usage and [DONE]; `rawSse` payloads are sent
/// exactly as given (nothing added), for broken streams.
///
/// When the script is used up, the gateway answers every request with --fallback-text.
#[derive(Parser, Debug)]
#[command(version, verbatim_doc_comment)]
struct Args {
    /// Gateway replies to serve in order (JSON array; see above).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Serve LLM_GATEWAY_ENDPOINT from the streaming gateway (events sent one by one).
    #[arg(long)]
    streaming: bool,
    /// A policy bundle template (JSON) replacing the default one.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// How the Session and Workspace fakes write unset members: as-served (what the real
    /// services send), verbose (every optional member, null when unset) or omitted (no nulls).
    #[arg(long, default_value = "as-served", value_name = "STYLE")]
    nulls: Nulls,
    /// The reply once the script is used up.
    #[arg(long, default_value = "The mock gateway has no scripted reply left.")]
    fallback_text: String,
    /// Do not echo requests on stderr.
    #[arg(long)]
    quiet: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let fakes = Fakes::start().await?;
    let replies = match &args.script {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading {}", file.display()))?;
            parse_script(&text).with_context(|| format!("in {}", file.display()))?
        }
        None => Vec::new(),
    };
    let reply_count = replies.len();
    let fallback = Some(GatewayReply::Text(args.fallback_text.clone()));
    if args.streaming {
        replies
            .into_iter()
            .for_each(|reply| fakes.streaming_gateway.push_reply(reply));
        fakes.streaming_gateway.set_fallback_reply(fallback);
    } else {
        fakes.gateway.push_replies(replies);
        fakes.gateway.set_fallback_reply(fallback);
    }
    fakes.session.set_nulls(args.nulls);
    fakes.workspace.set_nulls(args.nulls);
    if let Some(file) = &args.policy {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let template = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", file.display()))?;
        fakes.session.set_policy(template);
    }

    let exports: String = fakes
        .env_vars()
        .into_iter()
        .map(|(name, value)| {
            let value = match name {
                "LLM_GATEWAY_ENDPOINT" if args.streaming => fakes.streaming_gateway.url(),
                _ => value,
            };
            format!("export {name}={value}\n")
        })
        .collect();
    // One write, whose failure is ignored: a launcher that reads only the lines it needs
    // and closes the pipe (`cargo xtask demo` did) must not take the fakes down with it —
    // `println!` panics on a closed stdout, and the panicking process went on serving only
    // until its fakes' drops finished, then exited under a runtime still mid-task.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(exports.as_bytes())
        .and_then(|()| stdout.flush());
    drop(stdout);
    let _ = writeln!(
        std::io::stderr(),
        "mock-services: {reply_count} scripted gateway repl{}; Ctrl-C to stop",
        if reply_count == 1 { "y" } else { "ies" }
    );

    let mut seen = [0usize; 7];
    let mut ticker = tokio::time::interval(Duration::from_millis(300));
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = ticker.tick() => {
                if !args.quiet {
                    echo_new(&fakes, &mut seen).await;
                }
            }
        }
    }
    Ok(())
}

/// Prints requests that arrived since the last call, one line each.
async fn echo_new(fakes: &Fakes, seen: &mut [usize; 7]) {
    let lists: [(&str, Vec<RecordedRequest>); 7] = [
        ("gateway", fakes.gateway.all_requests().await),
        (
            "streaming-gateway",
            fakes.streaming_gateway.all_requests().await,
        ),
        ("session", fakes.session.requests().await),
        ("workspace", fakes.workspace.requests().await),
        ("approval", fakes.approvals.requests().await),
        ("audit", fakes.audit.requests().await),
        ("telemetry", fakes.telemetry.requests().await),
    ];
    for ((service, requests), seen) in lists.iter().zip(seen.iter_mut()) {
        for request in requests.iter().skip(*seen) {
            let _ = writeln!(
                std::io::stderr(),
                "[{service}] {} {} ({} bytes)",
                request.method,
                request.path,
                request.raw_body.len()
            );
        }
        *seen = requests.len();
    }
}
