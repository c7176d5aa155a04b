//! Tests that the platform trust roots load at the first handshake, not when a client is built.

use super::*;

#[test]
fn trust_roots_load_at_the_first_certificate_not_before() {
    let verifier = LazyPlatformVerifier::new(provider());
    // The ClientHello needs the schemes; they must not load the roots.
    assert!(!verifier.supported_verify_schemes().is_empty());
    assert!(!verifier.is_loaded());
    let not_a_certificate = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
    let Ok(name) = ServerName::try_from("example.com") else {
        panic!("a valid server name");
    };
    let verdict = verifier.verify_server_cert(&not_a_certificate, &[], &name, &[], UnixTime::now());
    assert!(verdict.is_err(), "garbage must not verify: {verdict:?}");
    assert!(verifier.is_loaded());
}

#[test]
fn the_config_offers_h2_and_http1() -> Result<(), rustls::Error> {
    let config = client_config()?;
    assert_eq!(
        config.alpn_protocols,
        [b"h2".to_vec(), b"http/1.1".to_vec()]
    );
    Ok(())
}
