Feature: Crash recovery from the checkpoint
  The runtime checkpoints after every step, so a crash loses nothing: the desktop app restarts
  the runtime and sends ResumeSession with the old sessionId, and the interrupted task is
  offered again and continues where it stopped (local-agent-host.md §9; INTEROP.md §1, §3).
  Here the kit kills the runtime with SIGKILL and starts a new process on the same
  CHECKPOINT_DIR.

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session

  @REQ-REC-001
  Scenario: a running session's checkpoint is in the spec's form
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    Then the checkpoint of the session is a valid checkpoint of the session

  @REQ-REC-002
  Scenario: the checkpoint records every completed step before the next model call
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    Then the checkpoint of the session records 1 completed step of the task

  @REQ-REC-003
  Scenario: a new runtime process restores a killed session from its checkpoint
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client asks for the session state
    Then the Session Service received a resume with the checkpoint's step cursor
    And the session runs again
    And the session state reports the session as SESSION_RUNNING

  @REQ-REC-004
  Scenario: the restored session offers the interrupted task with its checkpointed steps
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client asks for the session state
    Then the session state offers the task as incomplete with its prompt
    And the incomplete task reports 1 completed step

  @REQ-REC-005
  Scenario: the interrupted task continues after its last checkpointed step
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    Then the continued task completes with "The launch code is 4-8-15-16."
    And the first model request after the restart is for step "step_002"
    And the last model request carries the prompt exactly once
    And the ReadFile result of the first step reaches the model exactly once

  @REQ-REC-006
  Scenario Outline: a checkpoint that is <damage> is deleted and reported
    Given the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    And the runtime process is killed
    And the checkpoint of the session is <damage>
    When the client resumes the session
    Then the damaged checkpoint is refused with error code "CHECKPOINT_CORRUPT" or the session starts fresh
    And the damaged checkpoint is gone
    And a new session can be created at once, unless the resume started a fresh one

    Examples:
      | damage                     |
      | not JSON                   |
      | cut in half                |
      | of checkpoint version 9.9  |
      | another session's          |

  @REQ-REC-007
  Scenario: a checkpoint of a session the Session Service calls expired is deleted
    Given the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    And the runtime process is killed
    And the Session Service considers the session expired
    When the client resumes the session
    Then the request fails with error code "SESSION_EXPIRED"
    And the error message is a readable sentence
    And the checkpoint of the session is gone

  @REQ-REC-008
  Scenario: a clean shutdown deletes the checkpoint
    Given the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    When the client sends Shutdown without params
    Then the runtime exits with code 0
    And the checkpoint of the session is gone

  @REQ-REC-009
  Scenario: resuming a session with no checkpoint is a readable SESSION_NOT_FOUND
    When the client resumes a session this runtime never saw
    Then the request fails with error code "SESSION_NOT_FOUND"
    And the error message is a readable sentence

  @REQ-REC-010
  Scenario: a new session continues a past conversation from the workspace's history
    Given the model will answer "Noted: the launch code is 4-8-15-16."
    And the client has run the task "Remember the launch code 4-8-15-16." to its end
    And the client has shut the session down
    And the model will answer "You told me 4-8-15-16."
    When the client creates a session continuing the previous one
    And the client starts the task "What launch code did I give you?"
    And the task finishes
    Then the task_completed result is "You told me 4-8-15-16."
    And the last model request contains "Remember the launch code 4-8-15-16."
    And the last model request contains "Noted: the launch code is 4-8-15-16."

  @REQ-REC-011
  Scenario: a session killed before its first task can be resumed
    Given the runtime process is killed
    When the client resumes the session
    And the client asks for the session state
    Then the session state reports the session as SESSION_RUNNING

  @REQ-REC-014
  Scenario: event ids keep rising across a crash
    Given the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    Then every event of the resumed runtime has an id above every id the killed runtime sent
    And GetEvents since the last id the killed runtime sent reports a gap

  @REQ-REC-015
  Scenario: the patch preview of a resumed task keeps the changes made before the crash
    Given the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/new.txt", "content": "brand new"}
      """
    And the model will begin answering "Written" and then pause
    And the model will then answer "Written new.txt."
    When the client starts the task "Write new.txt."
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    And the client asks for the patch preview of the task
    Then the patch preview lists "new.txt" as added with a hunk containing "+brand new"
