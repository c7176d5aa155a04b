Feature: The tool router and the file tools
  The Local Tool Runtime dispatches each call to its tool, validates the arguments against the
  tool's schema before anything runs, and answers with a ToolResult whose errors carry the
  spec's codes (local-tool-runtime.md §3, §4.1–§4.3, §7.3, §8).

  @REQ-TOOL-001
  Scenario: a tool the registry does not hold is named in the TOOL_NOT_FOUND error
    Given a running session
    And the model will call LaunchRockets with:
      """
      {"count": 3}
      """
    And the model will then answer "I have no such tool."
    When the client starts the task "Launch three rockets."
    Then the tool call fails with errorCode "TOOL_NOT_FOUND" and a message containing "LaunchRockets"
    And the next model request answers the call with a tool message naming "TOOL_NOT_FOUND"

  @REQ-TOOL-002
  Scenario Outline: arguments that break the schema fail with INVALID_REQUEST naming the field
    Given the policy also grants Shell.Exec
    And a running session
    And the model will call <tool> with:
      """
      <arguments>
      """
    And the model will then answer "I will fix my arguments."
    When the client starts the task "Use a tool."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "<field>"
    And the workspace has no file "ran.txt"

    Examples:
      | tool       | arguments                                                              | field     |
      | ReadFile   | {}                                                                     | path      |
      | ReadFile   | {"path": "${WORKSPACE}/ran.txt", "offset": 0}                          | offset    |
      | ReadFile   | {"path": "${WORKSPACE}/ran.txt", "recursive": true}                    | recursive |
      | WriteFile  | {"path": "${WORKSPACE}/ran.txt"}                                       | content   |
      | WriteFile  | {"path": "${WORKSPACE}/ran.txt", "content": 42}                        | content   |
      | RunCommand | {"command": "touch ran.txt", "timeout": 601}                           | timeout   |
      | RunCommand | {"command": "touch ran.txt", "timeout": "soon"}                        | timeout   |

  @REQ-TOOL-003
  Scenario Outline: a file that does not exist is FILE_NOT_FOUND
    Given the policy also grants File.Delete
    And a running session
    And the model will call <tool> with:
      """
      {"path": "${WORKSPACE}/missing.txt"}
      """
    And the model will then answer "That file does not exist."
    When the client starts the task "Look at missing.txt."
    Then the tool call fails with errorCode "FILE_NOT_FOUND" and a message containing "missing.txt"

    Examples:
      | tool       |
      | ReadFile   |
      | DeleteFile |

  @REQ-TOOL-004
  Scenario: content larger than maxFileSizeBytes is FILE_TOO_LARGE and nothing is written
    Given the policy limits File.Write to files of at most 16 bytes
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/big.txt", "content": "This content is longer than sixteen bytes."}
      """
    And the model will then answer "The file is too large."
    When the client starts the task "Write big.txt."
    Then the tool call fails with errorCode "FILE_TOO_LARGE" and a message containing "16"
    And the workspace has no file "big.txt"

  @REQ-TOOL-005
  Scenario: a binary file is described, not dumped
    Given the workspace file "image.bin" holds the bytes "89 50 4E 47 00 01 02 03 FF"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "${WORKSPACE}/image.bin"}
      """
    And the model will then answer "That is a binary file."
    When the client starts the task "Read image.bin."
    Then the tool call succeeds with a result containing "Binary file, 9 bytes"

  @REQ-TOOL-006
  Scenario: offset and limit select lines, counting from 1
    Given the workspace file "lines.txt" contains these lines:
      """
      one
      two
      three
      four
      five
      """
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "${WORKSPACE}/lines.txt", "offset": 2, "limit": 2}
      """
    And the model will then answer "Lines two and three."
    When the client starts the task "Read lines 2 and 3 of lines.txt."
    Then the tool call result is exactly:
      """
      two
      three
      """

  @REQ-TOOL-007
  Scenario Outline: a byte order mark is stripped and non-UTF-8 bytes read as latin-1
    Given the workspace file "text.txt" holds the bytes "<bytes>"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "${WORKSPACE}/text.txt"}
      """
    And the model will then answer "Read it."
    When the client starts the task "Read text.txt."
    Then the tool call result is exactly:
      """
      <text>
      """

    Examples:
      | bytes                         | text  |
      | EF BB BF 68 65 6C 6C 6F 0A    | hello |
      | 63 61 66 E9 0A                | café  |

  @REQ-TOOL-008
  Scenario: WriteFile creates the folders, reports the bytes and keeps a file_diff
    Given a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/docs/guide/intro.md", "content": "Hello, world!"}
      """
    And the model will then answer "Written."
    When the client starts the task "Write docs/guide/intro.md."
    Then the tool call succeeds with a result containing "Wrote 13 bytes to ${WORKSPACE}/docs/guide/intro.md"
    And the workspace file "docs/guide/intro.md" now contains "Hello, world!"
    And the Workspace Service receives a file_diff artifact of the tool call containing "+Hello, world!"

  @REQ-TOOL-009
  Scenario: without createDirectories a missing folder is FILE_NOT_FOUND
    Given a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/nowhere/a.txt", "content": "x", "createDirectories": false}
      """
    And the model will then answer "The folder is missing."
    When the client starts the task "Write nowhere/a.txt."
    Then the tool call fails with errorCode "FILE_NOT_FOUND" and a message containing "nowhere"
    And the workspace has no file "nowhere"

  @REQ-TOOL-010
  Scenario: DeleteFile deletes a file
    Given the workspace file "old.txt" contains "obsolete"
    And the policy also grants File.Delete
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/old.txt"}
      """
    And the model will then answer "Deleted."
    When the client starts the task "Delete old.txt."
    Then every tool call of the task succeeds
    And the workspace has no file "old.txt"

  @REQ-TOOL-010
  Scenario: DeleteFile refuses a directory, which stays
    Given the workspace file "src/main.rs" contains "fn main() {}"
    And the policy also grants File.Delete
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/src"}
      """
    And the model will then answer "I cannot delete folders."
    When the client starts the task "Delete src."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "directory"
    And the workspace folder "src" still exists

  @REQ-TOOL-027
  Scenario: writing over a read-only file is PERMISSION_DENIED and the file is kept
    Given the workspace file "locked.txt" contains "original"
    And the workspace file "locked.txt" is read-only
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/locked.txt", "content": "overwritten"}
      """
    And the model will then answer "The file is read-only."
    When the client starts the task "Overwrite locked.txt."
    Then the tool call fails with errorCode "PERMISSION_DENIED" and a message containing "locked.txt"
    And the workspace file "locked.txt" now contains "original"
