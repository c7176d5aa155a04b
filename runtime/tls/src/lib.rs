//! HTTP clients for the runtime whose TLS trust roots load at the first TLS handshake.
//!
//! reqwest's default rustls set-up builds the platform verifier when the client is built,
//! and on Linux that reads and parses every certificate of the system store: most of the
//! instructions of CreateSession, for a session whose services may all be plain-HTTP
//! loopback addresses. [`client_builder`] starts from the same verifier (system roots,
//! `SSL_CERT_FILE`/`SSL_CERT_DIR`) but creates it on first use, so a process that never
//! speaks TLS never pays for it, and one that does pays once per client.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// A `reqwest::ClientBuilder` with TLS preconfigured: the platform's trust roots, loaded
/// at the first handshake; HTTP/2 and HTTP/1.1 offered by ALPN, as reqwest's own default.
pub fn client_builder() -> reqwest::ClientBuilder {
    match client_config() {
        Ok(config) => reqwest::Client::builder().tls_backend_preconfigured(config),
        // Only a provider without a safe protocol version gets here: reqwest's own set-up
        // is just as correct, merely eager.
        Err(_) => reqwest::Client::builder(),
    }
}

/// The rustls configuration [`client_builder`] installs.
pub fn client_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = provider();
    let verifier = Arc::new(LazyPlatformVerifier::new(provider.clone()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // reqwest leaves ALPN to a preconfigured config; offer what its default would.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The process-wide default provider if one was installed, else aws-lc-rs (reqwest's).
fn provider() -> Arc<CryptoProvider> {
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

/// `rustls_platform_verifier::Verifier`, created on the first certificate to verify.
#[derive(Debug)]
pub struct LazyPlatformVerifier {
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<rustls_platform_verifier::Verifier>,
}

impl LazyPlatformVerifier {
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        Self {
            provider,
            verifier: OnceLock::new(),
        }
    }

    /// Whether the trust roots have been loaded (by a verification).
    pub fn is_loaded(&self) -> bool {
        self.verifier.get().is_some()
    }

    /// A failed load (no readable roots) is not kept: the next handshake tries again, so
    /// a trust store fixed meanwhile is picked up without a restart.
    fn verifier(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        if let Some(verifier) = self.verifier.get() {
            return Ok(verifier);
        }
        let verifier = rustls_platform_verifier::Verifier::new(self.provider.clone())?;
        Ok(self.verifier.get_or_init(|| verifier))
    }
}

impl ServerCertVerifier for LazyPlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked when the ClientHello is written, before any certificate: answered from the
    /// provider, as the platform verifier itself does on this platform, without loading.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests;
