Feature: ReadFile decodes text in other encodings
  A byte order mark decides the encoding (UTF-16 LE/BE are text, not binary), and an explicit
  encoding argument is honoured (local-tool-runtime.md §4.1, §6.3). The utf-8 → OS default →
  latin-1 chain and the UTF-8 BOM are certified by REQ-TOOL-007.

  Scenario Outline: UTF-16 with a byte order mark and explicitly named encodings are decoded
    Given the workspace file "text.txt" holds the bytes "<bytes>"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "${WORKSPACE}/text.txt"<encoding>}
      """
    And the model will then answer "Read it."
    When the client starts the task "Read text.txt."
    Then the tool call result is exactly:
      """
      <text>
      """

    @REQ-TOOL-209
    Examples: without an encoding argument, a UTF-16 byte order mark is followed
      | bytes                         | encoding                     | text |
      | FF FE 68 00 69 00 0A 00       |                              | hi   |
      | FE FF 00 68 00 69 00 0A       |                              | hi   |

    @REQ-TOOL-033
    Examples: the encoding the encoding argument names
      | bytes                         | encoding                     | text |
      | 80 20 35 0A                   | , "encoding": "windows-1252" | € 5  |
      | 68 00 69 00 0A 00             | , "encoding": "utf-16le"     | hi   |
