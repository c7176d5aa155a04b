//! The error shape shared by local IPC and every backend (architecture.md §6.5).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The spec's string error codes. Parsing is open (INTEROP.md §7): a code this version does
/// not know is kept as [`ErrorCode::Other`] rather than rejected.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidRequest,
    Unauthorized,
    SessionNotFound,
    SessionExpired,
    /// The Session Service answered `compatibilityStatus: "incompatible"`.
    SessionIncompatible,
    PolicyBundleInvalid,
    PolicyExpired,
    CapabilityDenied,
    ApprovalRequired,
    ApprovalDenied,
    ToolNotFound,
    ToolExecutionFailed,
    ToolExecutionTimeout,
    FileNotFound,
    FileTooLarge,
    PermissionDenied,
    LlmGuardrailBlocked,
    LlmBudgetExceeded,
    /// The LLM Gateway could not be reached or kept failing after every retry.
    LlmUnavailable,
    /// The task reached `maxSteps` without finishing.
    MaxStepsExceeded,
    /// The model's answer was cut off by the output token limit too many times in a row.
    LlmOutputTruncated,
    WorkspaceUploadFailed,
    /// A backend service (Session, Workspace) could not be reached or answered 5xx.
    ServiceUnavailable,
    /// The crash-recovery checkpoint was unreadable, truncated, of an unknown version or
    /// another session's (local-agent-host.md §9.7); it has been deleted.
    CheckpointCorrupt,
    RateLimited,
    InternalError,
    Other(String),
}

impl ErrorCode {
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidRequest,
        ErrorCode::Unauthorized,
        ErrorCode::SessionNotFound,
        ErrorCode::SessionExpired,
        ErrorCode::SessionIncompatible,
        ErrorCode::PolicyBundleInvalid,
        ErrorCode::PolicyExpired,
        ErrorCode::CapabilityDenied,
        ErrorCode::ApprovalRequired,
        ErrorCode::ApprovalDenied,
        ErrorCode::ToolNotFound,
        ErrorCode::ToolExecutionFailed,
        ErrorCode::ToolExecutionTimeout,
        ErrorCode::FileNotFound,
        ErrorCode::FileTooLarge,
        ErrorCode::PermissionDenied,
        ErrorCode::LlmGuardrailBlocked,
        ErrorCode::LlmBudgetExceeded,
        ErrorCode::LlmUnavailable,
        ErrorCode::MaxStepsExceeded,
        ErrorCode::LlmOutputTruncated,
        ErrorCode::WorkspaceUploadFailed,
        ErrorCode::ServiceUnavailable,
        ErrorCode::CheckpointCorrupt,
        ErrorCode::RateLimited,
        ErrorCode::InternalError,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::SessionNotFound => "SESSION_NOT_FOUND",
            ErrorCode::SessionExpired => "SESSION_EXPIRED",
            ErrorCode::SessionIncompatible => "SESSION_INCOMPATIBLE",
            ErrorCode::PolicyBundleInvalid => "POLICY_BUNDLE_INVALID",
            ErrorCode::PolicyExpired => "POLICY_EXPIRED",
            ErrorCode::CapabilityDenied => "CAPABILITY_DENIED",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::ApprovalDenied => "APPROVAL_DENIED",
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::ToolExecutionFailed => "TOOL_EXECUTION_FAILED",
            ErrorCode::ToolExecutionTimeout => "TOOL_EXECUTION_TIMEOUT",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::LlmGuardrailBlocked => "LLM_GUARDRAIL_BLOCKED",
            ErrorCode::LlmBudgetExceeded => "LLM_BUDGET_EXCEEDED",
            ErrorCode::LlmUnavailable => "LLM_UNAVAILABLE",
            ErrorCode::MaxStepsExceeded => "MAX_STEPS_EXCEEDED",
            ErrorCode::LlmOutputTruncated => "LLM_OUTPUT_TRUNCATED",
            ErrorCode::WorkspaceUploadFailed => "WORKSPACE_UPLOAD_FAILED",
            ErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            ErrorCode::CheckpointCorrupt => "CHECKPOINT_CORRUPT",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::Other(code) => code,
        }
    }

    pub fn parse(code: &str) -> ErrorCode {
        Self::ALL
            .iter()
            .find(|known| known.as_str() == code)
            .cloned()
            .unwrap_or_else(|| ErrorCode::Other(code.to_owned()))
    }

    /// Whether retrying the same request later can succeed.
    pub fn default_retryable(&self) -> bool {
        matches!(
            self,
            ErrorCode::RateLimited
                | ErrorCode::ServiceUnavailable
                | ErrorCode::LlmUnavailable
                | ErrorCode::WorkspaceUploadFailed
                | ErrorCode::InternalError
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&code))
    }
}

/// `{code, message, retryable, details?}`: the body of every error, carried in JSON-RPC
/// `error.data` and in backend error responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorShape {
    pub code: ErrorCode,
    /// Shown to people by the desktop app: a whole, human-readable sentence.
    pub message: String,
    #[serde(default)]
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ErrorShape {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let retryable = code.default_retryable();
        Self {
            code,
            message: message.into(),
            retryable,
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }
}

impl fmt::Display for ErrorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorShape {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_stay_open() {
        for code in ErrorCode::ALL {
            assert_eq!(&ErrorCode::parse(code.as_str()), code);
        }
        assert_eq!(
            ErrorCode::parse("SOMETHING_NEW"),
            ErrorCode::Other("SOMETHING_NEW".into())
        );
        let parsed: ErrorShape =
            serde_json::from_str(r#"{"code":"X_Y","message":"m","retryable":true}"#).unwrap();
        assert_eq!(parsed.code.as_str(), "X_Y");
    }
}
