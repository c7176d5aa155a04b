Feature: The coding file tools of the real app's users
  EditFile, MultiEdit, ListDirectory, FindFiles, GrepFiles, CreateDirectory and MoveFile, with
  the Python runtime's names and arguments, each judged under its file capability like the
  built-in tools: offered only when granted, paths resolved against the project folder, blocked
  paths never shown, edits and moves recorded in the patch preview (INTEROP.md §11).

  @REQ-TOOL-230
  Scenario: EditFile replaces the one occurrence of old_text and the patch preview shows the change
    Given the workspace file "app.py" contains these lines:
      """
      def greet():
          return 'hello'
      """
    And a running session
    And the model will call EditFile with:
      """
      {"path": "${WORKSPACE}/app.py", "old_text": "return 'hello'", "new_text": "return 'hi'"}
      """
    And the model will then answer "Edited."
    When the client starts the task "Say hi instead."
    And the client asks for the patch preview of the task
    Then every tool call of the task succeeds
    And the workspace file "app.py" now contains "def greet():\n    return 'hi'\n"
    And the patch preview lists "app.py" as modified with a hunk containing "+    return 'hi'"

  @REQ-TOOL-231
  Scenario: EditFile refuses old_text that occurs more than once and changes nothing
    Given the workspace file "dup.txt" contains these lines:
      """
      x = 1
      x = 1
      """
    And a running session
    And the model will call EditFile with:
      """
      {"path": "${WORKSPACE}/dup.txt", "old_text": "x = 1", "new_text": "x = 2"}
      """
    And the model will then answer "It occurs twice."
    When the client starts the task "Change x."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "2 times"
    And the workspace file "dup.txt" now contains "x = 1\nx = 1\n"

  @REQ-TOOL-232
  Scenario: MultiEdit applies nothing when one of its edits does not match
    Given the workspace file "multi.txt" contains these lines:
      """
      alpha
      beta
      """
    And a running session
    And the model will call MultiEdit with:
      """
      {"path": "${WORKSPACE}/multi.txt", "edits": [{"old_text": "alpha", "new_text": "ALPHA"}, {"old_text": "gamma", "new_text": "GAMMA"}]}
      """
    And the model will then answer "The second edit did not match."
    When the client starts the task "Edit multi.txt."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "0 times"
    And the workspace file "multi.txt" now contains "alpha\nbeta\n"

  @REQ-TOOL-233
  Scenario: ListDirectory lists a folder's entries but never a blocked path
    Given the workspace file "src/main.rs" contains "fn main() {}"
    And the workspace file "README.md" contains "# demo"
    And the workspace file ".env" contains "API_TOKEN=hunter2"
    And the policy allows File.Read under "." and blocks ".env"
    And a running session
    And the model will call ListDirectory with:
      """
      {"path": "${WORKSPACE}", "include_hidden": true}
      """
    And the model will then answer "Listed."
    When the client starts the task "What is in the project?"
    Then the tool call succeeds with a result containing "README.md"
    And the tool call succeeds with a result containing "src"
    And the tool call result does not contain ".env"

  @REQ-TOOL-234
  Scenario: FindFiles finds files by glob and leaves out what .gitignore ignores
    Given the workspace file "src/lib.rs" contains "pub fn f() {}"
    And the workspace file "src/util/helpers.rs" contains "pub fn g() {}"
    And the workspace file "target/debug/build.rs" contains "generated"
    And the workspace file ".gitignore" contains "target/"
    And a running session
    And the model will call FindFiles with:
      """
      {"directory": "${WORKSPACE}", "pattern": "*.rs"}
      """
    And the model will then answer "Found them."
    When the client starts the task "Find the Rust files."
    Then the tool call succeeds with a result containing "lib.rs"
    And the tool call succeeds with a result containing "helpers.rs"
    And the tool call result does not contain "build.rs"

  @REQ-TOOL-235
  Scenario: GrepFiles shows each matching line with its file and line number, never from a blocked path
    Given the workspace file "notes.txt" contains these lines:
      """
      first line
      the API_TOKEN goes in .env
      """
    And the workspace file ".env" contains "API_TOKEN=hunter2"
    And the policy allows File.Read under "." and blocks ".env"
    And a running session
    And the model will call GrepFiles with:
      """
      {"directory": "${WORKSPACE}", "pattern": "API_TOKEN"}
      """
    And the model will then answer "Found it."
    When the client starts the task "Where is the token mentioned?"
    Then the tool call succeeds with a result containing "notes.txt"
    And the tool call succeeds with a result containing "2"
    And the tool call result does not contain "hunter2"

  @REQ-TOOL-236
  Scenario: CreateDirectory creates a folder with its missing parents
    Given a running session
    And the model will call CreateDirectory with:
      """
      {"path": "${WORKSPACE}/docs/guides/setup"}
      """
    And the model will then answer "Created."
    When the client starts the task "Make the docs folders."
    Then every tool call of the task succeeds
    And the workspace folder "docs/guides/setup" now exists

  @REQ-TOOL-237
  Scenario: MoveFile moves a file and the patch preview shows it gone from one path and added at the other
    Given the workspace file "old_name.txt" contains "moving day"
    And a running session
    And the model will call MoveFile with:
      """
      {"source": "${WORKSPACE}/old_name.txt", "destination": "${WORKSPACE}/archive/new_name.txt"}
      """
    And the model will then answer "Moved."
    When the client starts the task "Archive old_name.txt."
    And the client asks for the patch preview of the task
    Then every tool call of the task succeeds
    And the workspace has no file "old_name.txt"
    And the workspace file "archive/new_name.txt" now contains "moving day"
    And the patch preview lists "old_name.txt" as deleted with a hunk containing "-moving day"
    And the patch preview lists "archive/new_name.txt" as added with a hunk containing "+moving day"

  @REQ-TOOL-238
  Scenario: MoveFile onto a blocked path is denied by the policy and nothing moves
    Given the workspace file "hook.sh" contains "echo pwned"
    And a running session
    And the model will call MoveFile with:
      """
      {"source": "${WORKSPACE}/hook.sh", "destination": "${WORKSPACE}/.git/hooks/pre-commit"}
      """
    And the model will then answer "That path is blocked."
    When the client starts the task "Install the hook."
    Then the MoveFile call is denied and the workspace file "hook.sh" still contains "echo pwned"
    And the workspace has no file ".git/hooks/pre-commit"

  @REQ-TOOL-239
  Scenario: without File.Write the model is offered the reading tools but not the editing ones
    Given the policy does not grant File.Write
    And a running session
    And the model will call ListDirectory with:
      """
      {"path": "${WORKSPACE}"}
      """
    And the model will then answer "Nothing to change."
    When the client starts the task "Look around."
    Then every tool call of the task succeeds
    And the model is offered the function "ListDirectory"
    And the model is offered the function "FindFiles"
    And the model is offered the function "GrepFiles"
    And the model is not offered the function "EditFile"
    And the model is not offered the function "MultiEdit"
    And the model is not offered the function "CreateDirectory"
    And the model is not offered the function "MoveFile"

  @REQ-TOOL-240
  Scenario Outline: coding file tool arguments that break the schema fail with INVALID_REQUEST naming the field
    Given a running session
    And the model will call <tool> with:
      """
      <arguments>
      """
    And the model will then answer "I will fix my arguments."
    When the client starts the task "Use a tool."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "<field>"

    Examples:
      | tool            | arguments                                                                   | field         |
      | EditFile        | {"path": "${WORKSPACE}/a.txt", "old_text": "a"}                             | new_text      |
      | MultiEdit       | {"path": "${WORKSPACE}/a.txt", "edits": []}                                 | edits         |
      | FindFiles       | {"directory": "${WORKSPACE}", "pattern": "*", "max_results": 501}           | max_results   |
      | GrepFiles       | {"directory": "${WORKSPACE}", "pattern": "a", "context_lines": 6}           | context_lines |
      | GrepFiles       | {"directory": "${WORKSPACE}", "pattern": "("}                               | pattern       |
      | MoveFile        | {"source": "${WORKSPACE}/a.txt"}                                            | destination   |
      | CreateDirectory | {"path": "${WORKSPACE}/d", "create_parents": "yes"}                         | create_parents |

  @REQ-TOOL-241
  Scenario Outline: a file or folder that does not exist is FILE_NOT_FOUND
    Given a running session
    And the model will call <tool> with:
      """
      <arguments>
      """
    And the model will then answer "It does not exist."
    When the client starts the task "Look at missing."
    Then the tool call fails with errorCode "FILE_NOT_FOUND" and a message containing "missing"

    Examples:
      | tool          | arguments                                                                     |
      | EditFile      | {"path": "${WORKSPACE}/missing.txt", "old_text": "a", "new_text": "b"}        |
      | ListDirectory | {"path": "${WORKSPACE}/missing"}                                              |
      | GrepFiles     | {"directory": "${WORKSPACE}/missing", "pattern": "a"}                         |
      | MoveFile      | {"source": "${WORKSPACE}/missing.txt", "destination": "${WORKSPACE}/b.txt"}   |

  @REQ-TOOL-242
  Scenario: ViewImage shows the model the image as an image_url data URI part of the tool result
    Given the gateway takes image parts
    And the workspace file "chart.png" holds the bytes "89 50 4E 47 0D 0A 1A 0A 00 00 00 0D 49 48 44 52 00 00 00 01"
    And a running session
    And the model will call ViewImage with:
      """
      {"path": "${WORKSPACE}/chart.png"}
      """
    And the model will then answer "A chart."
    When the client starts the task "What does chart.png show?"
    Then every tool call of the task succeeds
    And the model sees the workspace file "chart.png" as a "image/png" image

  @REQ-TOOL-243
  Scenario: ViewImage refuses a file that is not an image, and shows the model nothing
    Given the gateway takes image parts
    And the workspace file "notes.txt" contains "plain text, not an image"
    And a running session
    And the model will call ViewImage with:
      """
      {"path": "${WORKSPACE}/notes.txt"}
      """
    And the model will then answer "That is not an image."
    When the client starts the task "Show me notes.txt."
    Then the tool call fails with errorCode "INVALID_REQUEST"
    And the model is shown no image

  @REQ-TOOL-244
  Scenario: ViewImage refuses an image larger than maxFileSizeBytes, and shows the model nothing
    Given the gateway takes image parts
    And the policy limits File.Read to files of at most 16 bytes
    And the workspace file "big.png" holds the bytes "89 50 4E 47 0D 0A 1A 0A 00 00 00 0D 49 48 44 52 00 00 00 01"
    And a running session
    And the model will call ViewImage with:
      """
      {"path": "${WORKSPACE}/big.png"}
      """
    And the model will then answer "Too large."
    When the client starts the task "Show me big.png."
    Then the tool call is refused as too large
    And the model is shown no image
