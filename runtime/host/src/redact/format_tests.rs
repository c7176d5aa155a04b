//! Credential formats the default rules recognise by shape — npm, GitLab, Google API and
//! Hugging Face keys, Slack webhooks, netrc passwords, `Authorization: Basic`, docker's
//! config `auth`, `sk-` keys glued to the text before them — each redacted, and each rule
//! kept off ordinary text: tricky look-alikes and this workspace's own source files.

use super::*;

fn clean(text: &str) -> String {
    Redactor::with_defaults().redact(text).into_owned()
}

/// The rule kinds these tests are about (older kinds have their own corpus test).
const KINDS: &[&str] = &[
    "npm_token",
    "gitlab_token",
    "google_api_key",
    "slack_webhook",
    "huggingface_token",
    "basic_auth",
    "docker_auth",
];

#[test]
fn each_format_is_redacted_and_its_secret_gone() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "npm_token",
        ),
        (
            "git clone https://oauth2:x@gitlab.com/g/p.git # glpat-aB3dE5fG7hI9jK1lM3nO",
            "glpat-aB3dE5fG7hI9jK1lM3nO",
            "gitlab_token",
        ),
        (
            "GOOGLE_MAPS=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "google_api_key",
        ),
        (
            "curl -X POST https://hooks.slack.com/services/T0AB12CDE/B0FG34HIJ/aBcDeFgHiJkLmNoPqRsTuVwX",
            "T0AB12CDE/B0FG34HIJ/aBcDeFgHiJkLmNoPqRsTuVwX",
            "slack_webhook",
        ),
        (
            "huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
            "huggingface_token",
        ),
        (
            "machine api.example.com login alice password s3cr3t-Horse",
            "s3cr3t-Horse",
            "password",
        ),
        (
            "machine api.example.com\n  login alice\n  password s3cr3t-Horse\n",
            "s3cr3t-Horse",
            "password",
        ),
        (
            "{\"text\":\"machine h\\n login alice\\n password s3cr3t-Horse\\n\"}",
            "s3cr3t-Horse",
            "password",
        ),
        (
            "> Authorization: Basic YWxpY2U6czNjcjN0LUhvcnNl",
            "YWxpY2U6czNjcjN0LUhvcnNl",
            "basic_auth",
        ),
        (
            "curl -H 'authorization: basic YWxpY2U6czNjcjN0LUhvcnNl' https://x",
            "YWxpY2U6czNjcjN0LUhvcnNl",
            "basic_auth",
        ),
        (
            "{\"auths\": {\"ghcr.io\": {\"auth\": \"YWxpY2U6czNjcjN0LUhvcnNl\"}}}",
            "YWxpY2U6czNjcjN0LUhvcnNl",
            "docker_auth",
        ),
        (
            "{\"output\": \"{\\\"auths\\\":{\\\"r\\\":{\\\"auth\\\":\\\"dXNlcjpwYXNzd29yZA==\\\"}}}\"}",
            "dXNlcjpwYXNzd29yZA==",
            "docker_auth",
        ),
        (
            "KEY=prefixsk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
            "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
            "api_key",
        ),
        (
            "VAL_sk-ant-api03-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
            "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
            "api_key",
        ),
        (
            "OPENAI=xsk-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx",
            "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx",
            "api_key",
        ),
    ];
    let mut failures = Vec::new();
    for (text, secret, kind) in cases {
        let out = clean(text);
        if out.contains(secret) || !out.contains(&format!("[REDACTED:{kind}]")) {
            failures.push(format!("{text:?} → {out:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // JSON stays JSON.
    let json = "{\"auths\": {\"ghcr.io\": {\"auth\": \"YWxpY2U6czNjcjN0LUhvcnNl\"}}}";
    assert!(serde_json::from_str::<serde_json::Value>(&clean(json)).is_ok());
}

/// Look-alikes of each format in ordinary code, configuration and prose.
const LOOK_ALIKES: &[&str] = &[
    "npm_config_cache=/home/u/.npm npm_package_version=1.2.3 npm_lifecycle_event=test",
    "let glpat = config.gitlab_pat_env(); // glpat- prefixed tokens are read from GITLAB_TOKEN",
    "const AIza = 'AIza'; // Google keys start with AIza and are 39 characters long",
    "https://hooks.slack.com/ is the host for incoming webhooks; see api.slack.com/messaging",
    "from huggingface_hub import hf_hub_download\npath = hf_hub_download(repo_id=\"gpt2\")",
    "Please login with your user name and password.\nThe login form password field is required.",
    "response.headers['WWW-Authenticate'] = 'Basic realm=\"api\"'\nauth = HTTPBasicAuth(user, pw)",
    "{\"auth\": {\"type\": \"oauth2\"}, \"authentication\": \"required\", \"auth\": \"none\"}",
    "disk-usage-monitor risk-assessment-pipeline task-sk-runner ask-for-review-before-merge",
    "fn check_disk_space(path: &Path) -> io::Result<u64> { Ok(0) }",
    "sk-learn is spelt scikit-learn; use sklearn.model_selection.train_test_split",
];

#[test]
fn look_alikes_come_through_unchanged() {
    for text in LOOK_ALIKES {
        assert_eq!(clean(text), *text);
    }
}

fn source_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "redact" | "benches" | "fixtures" | "steps"
            ) {
                source_files(&path, out);
            }
        } else if name.ends_with(".rs") && !name.contains("test") {
            out.push(path);
        }
    }
}

#[test]
fn the_workspace_source_holds_no_false_positive_of_these_formats() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["runtime", "conformance/src", "xtask", "mocks"] {
        source_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let redactor = Redactor::with_defaults();
    let mut hits = Vec::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        // Inline unit tests hold sample keys on purpose; the source before them is ordinary.
        let source = text
            .split("#[cfg(test)]\nmod tests {")
            .next()
            .unwrap_or_default();
        let out = redactor.redact(source);
        for kind in KINDS {
            if out.contains(&format!("[REDACTED:{kind}]")) {
                hits.push(format!("{}: {kind}", path.display()));
            }
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}
