//! The one start-up of the axum-based fakes (web server, MCP server, streaming gateway): an
//! ephemeral loopback port, served until a token is cancelled, with graceful shutdown.

use std::net::SocketAddr;

use axum::Router;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Binds `127.0.0.1:0` and serves `router` there until `stop` is cancelled; `what` names
/// the fake in the one line written if serving fails.
// A fake that stops is told to the person running the kit or mock-services.
#[allow(clippy::print_stderr)]
pub(crate) async fn serve(
    router: Router,
    stop: CancellationToken,
    what: &'static str,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let address = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(error) = served {
            eprintln!("agent-mocks: {what} stopped: {error}");
        }
    });
    Ok((address, task))
}
