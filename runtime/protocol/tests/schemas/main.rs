//! Drift tests: the Rust types of this crate against `schemas/`, the source of truth.
//!
//! 1. A representative value of every type (every `EventBody` variant, every enum variant) is
//!    serialized and validated against its schema, and every object key it carries must be
//!    declared by the schema (so a renamed optional field is caught too, even where the schema
//!    allows extra fields).
//! 2. Every valid example of a schema that maps to a Rust type deserializes into that type, and
//!    serializing it again still satisfies the schema.
//! 3. The schema enums equal the Rust enums.

// Test code: a panic is the failure report (clippy's in-test allowance does not reach the
// helpers of an integration-test crate).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use agent_protocol::approval::{ApprovalRequest, Decision, RiskLevel};
use agent_protocol::audit::{AuditEvent, AuditEventBatch, Severity};
use agent_protocol::checkpoint::{CHECKPOINT_VERSION, Checkpoint, CheckpointTask};
use agent_protocol::error::{ErrorCode, ErrorShape};
use agent_protocol::events::{self, *};
use agent_protocol::jsonrpc::{self, ErrorObject, Id, Notification, Request, Response};
use agent_protocol::message::{ConversationMessage, MessageToolCall, Role};
use agent_protocol::methods::{self, *};
use agent_protocol::policy::{
    ApprovalRule, CapabilityEntry, LlmPolicy, PolicyBundle, RedactionRule,
};
use agent_protocol::services::*;
use agent_protocol::state::{SessionStatus, TaskStatus};
use agent_protocol::tool::{
    ArtifactData, FileChange, ToolDefinition, ToolError, ToolLimits, ToolRequest, ToolResult,
    ToolStatus,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const T: &str = "2026-02-21T15:04:22Z";

mod enums;
mod event_schemas;
mod examples;
mod method_schemas;
mod record_schemas;
mod support;
mod tool_schemas;
mod values;

use support::*;
use values::*;
