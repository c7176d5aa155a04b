//! No code: this crate's dependency tables give the kit, the mocks and xtask the feature sets
//! `cargo test --workspace` compiles their dependencies with (`cargo xtask workspace-hack`).
