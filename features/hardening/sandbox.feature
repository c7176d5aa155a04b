Feature: Commands are confined by the OS, whatever the command line says
  A command-line parser can never prove what a shell will do, so every process the runtime
  starts runs inside an OS sandbox that admits only what the policy grants:
  writes only in the granted folders, `.git` read-only for commands, no network without a
  network grant. Each rule is judged from outside — a file outside the workspace that must not
  appear, a repository file that must stay unchanged, a loopback listener that must not be
  reached. The commands are POSIX shell; the network one needs the runtime's shell to be bash
  (`/dev/tcp`), as the kit's is when `SHELL` names bash.

  Background:
    Given the policy grants Shell.Exec for the command "echo" only

  @REQ-HARD-050
  Scenario: an allowed command cannot write outside the granted folders
    Given a running session
    And the model will run the shell command "echo x > ${OUTSIDE}/escaped.txt; echo x >> ${OUTSIDE}/.bashrc"
    And the model will then answer "Done."
    When the client starts the task "Write outside."
    Then the file "escaped.txt" outside the workspace does not exist
    And the file ".bashrc" outside the workspace does not exist

  @REQ-HARD-052
  Scenario: a command cannot change the repository's own files
    Given the workspace file ".git/config" contains "[core]"
    And a running session
    And the model will run the shell command "echo '	fsmonitor = touch pwned' >> .git/config"
    And the model will then answer "Done."
    When the client starts the task "Configure git."
    Then the workspace file ".git/config" still reads "[core]"

  @REQ-HARD-052 @posix-shell
  Scenario: a command cannot change the repository's config where the policy lets .git be written
    Given the workspace file ".git/config" contains "[core]"
    And the policy is the real services' default with .git writable and the commands "echo"
    And a running session
    And the model will run the shell command "echo '	fsmonitor = touch pwned' >> .git/config"
    And the model will then answer "Done."
    When the client starts the task "Configure git."
    Then the workspace file ".git/config" still reads "[core]"

  @REQ-HARD-053
  Scenario: without a network grant a command reaches no listener, not even on loopback
    Given a TCP listener on loopback
    And a running session
    And the model will run the shell command "echo hi > /dev/tcp/127.0.0.1/${LISTENER_PORT}"
    And the model will then answer "Done."
    When the client starts the task "Connect."
    Then the loopback listener was never connected to

  @REQ-HARD-054
  Scenario: the session state says whether commands are sandboxed
    Given a running session
    Then GetSessionState reports that commands are sandboxed

  @REQ-HARD-055
  Scenario: a session whose commands run unsandboxed says so when it starts
    Given the runtime is started with AGENT_RUNTIME_SANDBOX set to "off"
    And a running session
    Then the runtime warned at session start that "without an OS sandbox"
