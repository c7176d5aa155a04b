Feature: Everyday developer commands behave in the runtime as they do on the machine
  INTEROP.md §10: with the real services' default policy (reads and writes in the project
  folder, `.env` and `.git/config` blocked for the file tools, `.git/` blocked for writes),
  the commands a developer runs every day — git, make and a C compiler, python with a
  virtual environment, cargo, npm — behave under the runtime's OS sandbox as they do without it:
  they read the user's settings and toolchains in the home folder and write only where the
  policy lets them. The kit runs each command itself first, in a copy of the workspace with
  the same home folder, and the runtime's result must show the same exit code and output.
  A machine that cannot run a command outside the runtime either makes its scenario not
  applicable.

  @REQ-TOOL-210 @posix-shell
  Scenario: git reads the user's settings and the repository
    Given the file ".gitconfig" in the home folder contains "[user] name = Kit Tester"
    And the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the policy is the real services' default with the commands "git"
    And the kit has run "git config user.name && git status --short && git log --format=%s" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "git config user.name && git status --short && git log --format=%s"
    And the model will then answer "One file changed."
    When the client starts the task "What changed?"
    Then the command's exit code and output are those the kit saw outside the runtime

  @REQ-TOOL-211 @posix-shell
  Scenario: git stages and commits where the policy lets .git be written
    Given the file ".gitconfig" in the home folder contains "[user] name = Kit Tester"
    And the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "todo.txt" contains "write the docs"
    And the policy is the real services' default with .git writable and the commands "git"
    And the kit has run "git add todo.txt && git -c user.email=kit@example.com commit -q -m 'Add the todo list' && git log --format=%s%n%an && git status --short" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "git add todo.txt && git -c user.email=kit@example.com commit -q -m 'Add the todo list' && git log --format=%s%n%an && git status --short"
    And the model will then answer "Committed."
    When the client starts the task "Commit todo.txt."
    Then the command's exit code and output are those the kit saw outside the runtime

  @REQ-TOOL-212 @posix-shell
  Scenario: make builds a C program with the system compiler
    Given the workspace file "hello.c" contains "int main(void) { return 0; }"
    And the workspace file "Makefile" contains "hello: hello.c"
    And the policy is the real services' default with the commands "make, ./hello, echo"
    And the kit has run "make -s hello && ./hello && echo built" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "make -s hello && ./hello && echo built"
    And the model will then answer "Built."
    When the client starts the task "Build hello."
    Then the command's exit code and output are those the kit saw outside the runtime

  @REQ-TOOL-213 @posix-shell
  Scenario: python makes and uses a virtual environment
    Given the policy is the real services' default with the commands "python3, .venv/bin/python"
    And the kit has run "python3 -m venv --without-pip .venv && .venv/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "python3 -m venv --without-pip .venv && .venv/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'"
    And the model will then answer "The venv works."
    When the client starts the task "Make a venv."
    Then the command's exit code and output are those the kit saw outside the runtime

  @REQ-TOOL-214 @posix-shell
  Scenario: cargo builds and runs a crate through the user's toolchain
    Given the workspace file "Cargo.toml" contains these lines:
      """
      [package]
      name = "hello"
      version = "0.1.0"
      edition = "2021"
      """
    And the workspace folder "src" exists
    And the workspace file "src/main.rs" contains these lines:
      """
      fn main() { println!("hello from cargo"); }
      """
    And the runtime and the kit use the machine's Rust toolchain
    And the policy is the real services' default with the commands "cargo"
    And the kit has run "cargo run -q --offline" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "cargo run -q --offline"
    And the model will then answer "It runs."
    When the client starts the task "Run the crate."
    Then the command's exit code and output are those the kit saw outside the runtime

  @REQ-TOOL-215 @posix-shell
  Scenario: npm installs a package of the project and runs a script with the user's settings
    Given the file ".npmrc" in the home folder contains "message=hello from the user's npmrc"
    And the workspace file "lib/package.json" contains these lines:
      """
      {"name": "greeter", "version": "1.0.0", "main": "index.js"}
      """
    And the workspace file "lib/index.js" contains these lines:
      """
      module.exports = () => "hello from npm";
      """
    And the workspace file "package.json" contains these lines:
      """
      {"name": "app", "version": "1.0.0", "scripts": {"greet": "node greet.js"}}
      """
    And the workspace file "greet.js" contains these lines:
      """
      console.log(require("greeter")(), "/", process.env.npm_config_message);
      """
    And the policy is the real services' default with the commands "npm"
    And the kit has run "npm install --offline --no-audit --no-fund --no-update-notifier --silent ./lib && npm run --silent greet" itself in a copy of the workspace
    And a running session
    And the model will run the shell command "npm install --offline --no-audit --no-fund --no-update-notifier --silent ./lib && npm run --silent greet"
    And the model will then answer "It greets."
    When the client starts the task "Run the greeter."
    Then the command's exit code and output are those the kit saw outside the runtime
