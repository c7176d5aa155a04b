Feature: Artifacts and the patch preview
  Artifacts a tool produces are uploaded to the Workspace Service before the result enters
  the thread — best effort: a failed upload leaves the result without the URI and is reported
  (local-agent-host.md §7.5; INTEROP.md §4). GetPatchPreview lists what the task changed
  (INTEROP.md §1).

  @REQ-TOOL-024
  Scenario: a file_diff artifact is uploaded with its ids and its URI is reported
    Given the workspace file "notes.txt" contains "old line"
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/notes.txt", "content": "new line"}
      """
    And the model will then answer "Updated."
    When the client starts the task "Update notes.txt."
    Then the Workspace Service receives a file_diff artifact of the tool call containing "-old line"
    And the tool call succeeds with a result containing "Wrote 8 bytes"

  @REQ-TOOL-025
  Scenario: a failed upload leaves the result without a URI and is reported by a warning
    Given the Workspace Service answers 500 to every request
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/notes.txt", "content": "new line"}
      """
    And the model will then answer "Updated."
    When the client starts the task "Write notes.txt."
    Then the tool call succeeds with a result containing "Wrote 8 bytes"
    And the tool call reports no artifact URI
    And a warning with code "WORKSPACE_UPLOAD_FAILED" says the file_diff artifact was not uploaded
    And the workspace file "notes.txt" now contains "new line"

  @REQ-TOOL-026
  Scenario: the patch preview lists added, modified and deleted files with their hunks
    Given the workspace file "keep.txt" contains "before"
    And the workspace file "gone.txt" contains "doomed"
    And the policy also grants File.Delete
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/new.txt", "content": "brand new"}
      """
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/keep.txt", "content": "after"}
      """
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/gone.txt"}
      """
    And the model will then answer "Three changes."
    When the client starts the task "Make three changes."
    And the client asks for the patch preview of the task
    Then every tool call of the task succeeds
    And the patch preview lists "new.txt" as added with a hunk containing "+brand new"
    And the patch preview lists "keep.txt" as modified with a hunk containing "-before"
    And the patch preview lists "gone.txt" as deleted with a hunk containing "-doomed"
    And the hunks of every file in the patch preview start at the first @@
