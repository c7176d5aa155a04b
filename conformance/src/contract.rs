//! The words the kit's layers share: the identity the kit's sessions run under, the marks a
//! step error carries, the tags a scenario's shell form is chosen by. A leaf: the World, the
//! driver, the ledger, the report and the steps all name these, and it names none of them.

pub(crate) use crate::runtime_manifest::NOT_APPLICABLE;

/// The user every session the kit opens belongs to.
pub(crate) const USER_ID: &str = "user_conformance";

/// The tenant every session the kit opens belongs to.
pub(crate) const TENANT_ID: &str = "tenant_conformance";

/// Marks a step error whose cause is a precondition the scenario could not set up (the
/// runtime's defect belongs to another requirement, named in the reason): the scenario is
/// "not judged", whatever the step's keyword.
pub(crate) const NOT_JUDGED: &str = "NOT JUDGED, a precondition failed:";

/// Marks a scenario whose commands need a POSIX shell: on a Windows runtime, a call without a
/// `command@windows` form is not applicable.
pub(crate) const POSIX_SHELL_TAG: &str = "posix-shell";

/// Marks a scenario whose command lines are cmd.exe's: not applicable where the runtime's
/// shell is POSIX sh. Such a scenario judges on Windows what its `@posix-shell` twin judges
/// elsewhere.
pub(crate) const CMD_SHELL_TAG: &str = "cmd-shell";
