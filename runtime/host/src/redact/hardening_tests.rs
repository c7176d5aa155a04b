//! The secret shapes an attack corpus got past redaction, and a corpus of
//! ordinary text that must come through unchanged.

use super::apply::cut_fragments;
use super::*;

fn clean(text: &str) -> String {
    Redactor::with_defaults().redact(text).into_owned()
}

const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

#[test]
fn secrets_the_corpus_found_are_redacted() {
    let body_line = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
    let cases = [
        format!("aws_secret_access_key = {AWS_SECRET}"),
        format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET}"),
        format!("{{\"SecretAccessKey\": \"{AWS_SECRET}\"}}"),
        "DB_PASSWORD=correcthorse".to_owned(),
        "export MYSQL_ROOT_PASSWORD='correcthorse'".to_owned(),
        "PGPASSWORD=correcthorse psql".to_owned(),
        "db.password: correcthorse".to_owned(),
        "app_pwd=correcthorse".to_owned(),
        "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc".to_owned(),
        "rk_test_4eC39HqLyjWDarjtT1zdp7dc".to_owned(),
        "postgres://admin:correcthorse@db.internal:5432/app".to_owned(),
        "https://user:correcthorse@example.com/x".to_owned(),
        "redis://:correcthorse@cache:6379".to_owned(),
        format!("{body_line}\n{body_line}\n-----END PRIVATE KEY-----\n"),
        format!("{body_line}\n{body_line}\n{body_line}\n{body_line}\n"),
    ];
    for text in &cases {
        let out = clean(text);
        assert!(out.contains("[REDACTED:"), "not redacted: {text} → {out}");
        for secret in [
            "correcthorse",
            AWS_SECRET,
            "4eC39HqLyjWDarjtT1zdp7dc",
            body_line,
        ] {
            assert!(!out.contains(secret), "{secret} survived: {out}");
        }
    }
}

#[test]
fn names_stay_readable_and_code_is_not_a_password() {
    assert_eq!(
        clean("DB_PASSWORD=correcthorse"),
        "DB_PASSWORD=[REDACTED:password]"
    );
    assert_eq!(
        clean("postgres://admin:correcthorse@db/app"),
        "postgres://admin:[REDACTED:url_credentials]@db/app"
    );
    for code in [
        "password = getpass.getpass()",
        "pwd = os.getcwd()",
        "OLDPWD=/home/user/project",
    ] {
        assert_eq!(clean(code), code);
    }
}

/// Ordinary source and prose: none of it may change.
const ORDINARY: &[&str] = &[
    "fn main() {\n    let args: Vec<String> = std::env::args().collect();\n    println!(\"{}\", args.len());\n}\n",
    "import os\nfrom pathlib import Path\n\ndef load(path: Path) -> str:\n    return path.read_text(encoding=\"utf-8\")\n",
    "The password field is validated on submit; see docs/auth.md for the reset flow.",
    "const url = new URL('https://example.com/api/v1/items?page=2#top');",
    "git clone git@github.com:rust-lang/rust.git && cd rust && ./x.py build",
    "ssh user@host.example.com -p 2222",
    "commit 3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291\nAuthor: A Person <a@example.com>",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "uuid = \"123e4567-e89b-12d3-a456-426614174000\"",
    "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days';",
    "[package]\nname = \"agent-host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    "#!/bin/sh\nset -eu\nfor f in *.txt; do wc -l \"$f\"; done\n",
    "let secret_count = secrets.len();\nlet key = map.keys().next();",
    "PWD=/home/user/project\nHOME=/home/user\nPATH=/usr/local/bin:/usr/bin:/bin",
    "http://localhost:8080/health returned 200 in 12ms",
    "export PASSWORD_MIN_LENGTH; token_count += 1; api_key_env = None",
];

#[test]
fn ordinary_text_comes_through_unchanged() {
    for text in ORDINARY {
        assert_eq!(clean(text), *text);
    }
}

#[test]
fn a_secret_cut_by_truncation_leaves_no_fragment() {
    let mut text =
        "key: ghp_ab12CD34ef\n[... truncated 120 bytes ...]\nNN7EXAMPLE more\nok".to_owned();
    assert!(cut_fragments(&mut text));
    assert_eq!(
        text,
        "key: [REDACTED:fragment]\n[... truncated 120 bytes ...]\n[REDACTED:fragment] more\nok"
    );
    let mut tail = "x\n[... truncated 5 bytes ...]\nab12cd34ef56 rest".to_owned();
    assert!(cut_fragments(&mut tail));
    assert_eq!(
        tail,
        "x\n[... truncated 5 bytes ...]\n[REDACTED:fragment] rest"
    );
    // A cut word or identifier (no digits) stays.
    let mut words = "compiling agent_host_module\n[... truncated 9 bytes ...]\nfinished".to_owned();
    assert!(!cut_fragments(&mut words));
    // A key without digits is cut too: its random-looking case gives it away.
    let mut letters =
        "sk_live_qWERtyuIoPAsdFgh\n[... truncated 40 bytes ...]\nGhJKLzxcVBNmqwERty end".to_owned();
    assert!(cut_fragments(&mut letters));
    assert_eq!(
        letters,
        "[REDACTED:fragment]\n[... truncated 40 bytes ...]\n[REDACTED:fragment] end"
    );
    for identifier in [
        "HttpRequestErrorHandler",
        "XMLHttpRequestFactory",
        "SCREAMING_SNAKE_CONSTANT",
        "some_long_identifier_name",
        "ThisIsAVeryLongClassName",
    ] {
        let mut text = format!("{identifier}\n[... truncated 9 bytes ...]\n{identifier}");
        assert!(!cut_fragments(&mut text), "{text}");
    }
}
