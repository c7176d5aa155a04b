Feature: The local run/trace store
  The app reads runs and traces from a local store (agent-run-plan.md, AgentRunStore): every
  SessionEvent appended as a JSON line, with size caps per file and in all, files rotated, and
  under backlog low-priority events (text_chunk first) summarised with a warning.

  @REQ-AUD-010
  Scenario: the run store rotates its files and stays within its caps
    Given the runtime is started with AGENT_RUNTIME_RUN_STORE_MAX_FILE_BYTES set to "3000"
    And the runtime is started with AGENT_RUNTIME_RUN_STORE_MAX_TOTAL_BYTES set to "7000"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt" 6 times, then answer "Done."
    When the client starts the task "Read notes.txt again and again."
    Then the task_completed result is "Done."
    And the run store under LOG_DIR/runs has rotated files of at most 3000 bytes, 7000 bytes in all
