Feature: The SessionEvent envelope
  Every event is a SessionEvent notification whose envelope the desktop app can rely on: an
  integer eventId that only grows, an object payload, a timestamp, and the full ID chain
  (architecture.md §6.1, local-agent-host.md §12, INTEROP.md §1).

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    And the client has run the task "What is the launch code in notes.txt?" to its end

  @REQ-EVT-001 @REQ-RPC-001 @REQ-RPC-002
  Scenario: every event is a schema-valid SessionEvent notification
    # judges @REQ-EVT-001
    Then every event is a SessionEvent notification valid against its schema
    # judges @REQ-RPC-001 @REQ-RPC-002
    And every line the runtime wrote is a valid JSON-RPC message

  @REQ-EVT-002
  Scenario: eventIds are integers that only grow
    Then every event has an integer eventId greater than the one before

  @REQ-EVT-003
  Scenario: every payload is an object
    Then every event payload is an object

  @REQ-EVT-004
  Scenario: every event carries the full ID chain
    Then every event carries the session's ID chain

  @REQ-EVT-005
  Scenario: every event carries an RFC 3339 timestamp
    Then every event carries an RFC 3339 timestamp
