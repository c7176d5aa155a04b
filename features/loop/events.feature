Feature: Replaying events and surviving a lost history upload
  A desktop app that re-mounts asks for the events it missed; a history upload that fails
  warns the app and the session goes on (INTEROP.md §1; local-agent-host.md §11).

  @REQ-LOOP-024
  Scenario: GetEvents replays every event after sinceId
    Given a running session
    And the model will answer "Replayed in full."
    And the client has run the task "Say something to replay." to its end
    When the client asks for the events since the task started
    Then the replay holds every later event in order, up to the latest id, with no gap

  @REQ-LOOP-025
  Scenario: GetEvents reports a gap when older events have left the ring
    Given the runtime is started with AGENT_RUNTIME_EVENT_RING_SIZE set to "4"
    And a running session
    And the model will answer "Far too many events for a small ring."
    And the client has run the task "Say something long." to its end
    When the client asks for the events since eventId 0
    Then the replay reports a gap

  @REQ-LOOP-026
  Scenario: a task whose history cannot be saved still completes, with a warning
    Given the Workspace Service is down
    And a running session
    And the model will answer "Saved or not, here is the answer."
    When the client starts the task "Answer even if saving fails."
    Then a warning with code "WORKSPACE_UPLOAD_FAILED" precedes task_completed
