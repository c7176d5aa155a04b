Feature: Paths the policy allows and blocks
  File paths are resolved — relative entries against the workspace, `.` and `..` segments,
  symlinks — before they are compared with the policy's allowed and blocked prefixes, and the
  blocklist wins (local-agent-host.md §8.2, §8.3; INTEROP.md §5; local-tool-runtime.md §8.1).

  @REQ-POL-003
  Scenario: a relative "." in allowedPaths admits the workspace's files
    Given the policy allows File.Read under "." and blocks ".env"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Found it."
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the runtime reports tool_completed for ReadFile with a result containing "The launch code is 4-8-15-16."

  @REQ-POL-004
  Scenario: a blocked relative entry denies the file although "." allows it
    Given the policy allows File.Read under "." and blocks ".env"
    And the workspace file ".env" contains "API_KEY=s3cr3t-value"
    And a running session
    And the model will call ReadFile on ".env"
    And the model will then answer "That file is off limits."
    When the client starts the task "What is in .env?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"

  @REQ-POL-005
  Scenario: a path that climbs out of the workspace with .. is denied
    Given the policy allows File.Read under "." and blocks ".env"
    And the file "outside.txt" beside the workspace contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile on "../outside.txt"
    And the model will then answer "That file is off limits."
    When the client starts the task "What is in ../outside.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"

  @REQ-POL-006
  Scenario: a symlink from the workspace into a blocked directory is denied
    Given the policy allows File.Read under "." and blocks "secrets/"
    And the workspace file "secrets/key.txt" contains "s3cr3t-value"
    And the workspace symlink "link" points to "secrets"
    And a running session
    And the model will call ReadFile on "link/key.txt"
    And the model will then answer "That file is off limits."
    When the client starts the task "What is in link/key.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"

  @REQ-POL-007
  Scenario: an allowed folder does not admit a sibling whose name it prefixes
    Given the policy allows File.Read only in the workspace folder "proj"
    And the workspace file "proj2/notes.txt" contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile on "proj2/notes.txt"
    And the model will then answer "That file is off limits."
    When the client starts the task "What is in proj2/notes.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"

  @REQ-POL-008
  Scenario: a file larger than maxFileSizeBytes is denied
    Given the policy limits File.Read to files of at most 16 bytes
    And the workspace file "big.txt" contains "This file is much longer than sixteen bytes: s3cr3t-value"
    And a running session
    And the model will call ReadFile on "big.txt"
    And the model will then answer "That file is too big."
    When the client starts the task "What is in big.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"

  @REQ-POL-008
  Scenario: a file of exactly maxFileSizeBytes is read
    Given the policy limits File.Read to files of at most 16 bytes
    And the workspace file "fits.txt" contains "sixteen-bytes-ok"
    And a running session
    And the model will call ReadFile on "fits.txt"
    And the model will then answer "Read it."
    When the client starts the task "What is in fits.txt?"
    Then the ReadFile call runs and returns "sixteen-bytes-ok"

  @REQ-POL-009
  Scenario: a path with a NUL byte is rejected
    Given the workspace file "notes.txt" contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile on "notes.txt" with a NUL byte appended
    And the model will then answer "That path is broken."
    When the client starts the task "What is in notes.txt?"
    Then the ReadFile call is rejected without reading anything
    And no model request contains "s3cr3t-value"

  @REQ-POL-024
  Scenario: a blockedPaths pattern that does not compile blocks every path
    Given the policy allows File.Read under "." and blocks "keys/[a-"
    And the workspace file "notes.txt" contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The policy is broken."
    When the client starts the task "What is in notes.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And no model request contains "s3cr3t-value"
