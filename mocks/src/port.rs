//! "The service is down": after a fake stops listening, its port must refuse connections
//! (what a client sees when the real service is not running) and must stay ours, so that no
//! other server started meanwhile — e.g. another fake in a parallel test — answers on it.
//!
//! The trick: a socket that is bound but never `listen`s holds the port while the kernel
//! answers every connection attempt with RST (connection refused). Ephemeral-port
//! allocation skips ports held by a bound socket, so nothing else is handed this port.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpSocket, TcpStream};

/// Waits (bounded, ~2 s) until connecting to `addr` is refused, i.e. the server that owned
/// it has closed its listener. Servers close asynchronously (wiremock's runs on its own
/// thread), and `go_down` must only return once the service is really unreachable.
pub(crate) async fn wait_until_refused(addr: SocketAddr) {
    for _ in 0..200 {
        match tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => drop(stream),
            Ok(Err(_)) => return,
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Binds `addr` without listening, so the port stays reserved and refuses connections.
/// `SO_REUSEADDR` is needed because connections the server just closed sit in TIME_WAIT on
/// this port and would otherwise make `bind` fail. Returns `None` if the port was taken in
/// the window between the server closing it and this call (then the port is at least not
/// served by our fake any more).
pub(crate) fn reserve(addr: SocketAddr) -> Option<TcpSocket> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .ok()?;
    socket.set_reuseaddr(true).ok()?;
    socket.bind(addr).ok()?;
    Some(socket)
}

/// A fresh loopback listener on an ephemeral port (std, because wiremock takes a std one).
pub(crate) fn loopback_listener() -> anyhow::Result<std::net::TcpListener> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?)
}
