//! A real TLS server on loopback, with a certificate for `localhost` issued by the test CA
//! in `fixtures/`: refused with the system's roots, accepted when `SSL_CERT_FILE` names the
//! CA — which shows the lazily loaded verifier both verifies and trusts what it loads.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Serves `ok` over HTTP/1.1 on TLS to every connection; returns the port.
async fn serve_tls() -> u16 {
    let Ok(cert) = CertificateDer::from_pem_file(fixture("localhost.crt")) else {
        panic!("fixture certificate");
    };
    let Ok(key) = PrivateKeyDer::from_pem_file(fixture("localhost.key")) else {
        panic!("fixture key");
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let Ok(config) = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| {
            builder
                .with_no_client_auth()
                .with_single_cert(vec![cert], key)
        })
    else {
        panic!("server config");
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let Ok(listener) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
        panic!("bind");
    };
    let Ok(address) = listener.local_addr() else {
        panic!("address");
    };
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
                let _ = tls.write_all(answer).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    address.port()
}

async fn get(port: u16) -> Result<String, reqwest::Error> {
    let client = agent_tls::client_builder().build()?;
    client
        .get(format!("https://localhost:{port}/"))
        .send()
        .await?
        .error_for_status()?
        .text()
        .await
}

#[tokio::test]
async fn a_server_outside_the_trust_roots_is_refused() {
    let port = serve_tls().await;
    let Err(error) = get(port).await else {
        panic!("a certificate from an unknown CA was accepted");
    };
    let mut chain = String::new();
    let mut source: Option<&dyn std::error::Error> = Some(&error);
    while let Some(error) = source {
        chain.push_str(&error.to_string());
        chain.push('\n');
        source = error.source();
    }
    assert!(chain.contains("certificate"), "{chain}");
}

/// Run in a child process with `SSL_CERT_FILE` set (the environment of this process must
/// not change under the other tests).
#[tokio::test]
#[ignore = "run by a_server_under_a_trusted_root_is_accepted"]
async fn trusted_root_child() {
    let port = serve_tls().await;
    match get(port).await {
        Ok(body) => assert_eq!(body, "ok"),
        Err(error) => panic!("the test CA was not trusted: {error:?}"),
    }
}

#[test]
fn a_server_under_a_trusted_root_is_accepted() {
    let Ok(me) = std::env::current_exe() else {
        panic!("the test binary's path");
    };
    let Ok(output) = Command::new(me)
        .args(["--exact", "trusted_root_child", "--ignored", "--nocapture"])
        .env("SSL_CERT_FILE", fixture("ca.crt"))
        .env_remove("SSL_CERT_DIR")
        .output()
    else {
        panic!("cannot run the child test");
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
