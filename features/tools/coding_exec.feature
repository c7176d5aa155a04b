Feature: FetchUrl, ExecuteCode and WebSearch, the Python runtime's network, execution and search tools
  INTEROP.md §11: the same names and arguments as the Python runtime the desktop app ships
  with, each judged under its capability like the built-in tools. FetchUrl (Network.Http)
  fetches a page with HttpRequest's rules on every hop and gives it back as Markdown;
  ExecuteCode (Code.Execute) runs code in the command sandbox, scoped by the entry's
  allowedLanguages, maxExecutionTimeSeconds and allowCodeNetwork, and the images its code
  writes to the folder named by COWORK_OUTPUT_DIR go back to the model where the gateway
  takes image parts; WebSearch (Search.Web) asks
  the search backend the runtime is configured with, and is offered only then. The kit's web
  server listens on loopback, so the FetchUrl scenarios start the runtime with its test-only
  loopback knob; the WebSearch scenarios name the kit's search endpoint through the runtime's
  search-endpoint knob (conformance/README.md). Every ExecuteCode call carries the optional
  description, as a model following the offered schema does, so that a runtime asking for it
  fails only the argument requirement (REQ-TOOL-270), not the behaviour each scenario judges.

  @REQ-TOOL-260
  Scenario: FetchUrl gives an HTML page back as Markdown
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the policy also grants Network.Http
    And a web server on loopback
    And a running session
    And the model will call FetchUrl with:
      """
      {"url": "${WEB}/page"}
      """
    And the model will then answer "Read it."
    When the client starts the task "Read the release notes."
    Then the tool call result is the web page as Markdown

  @REQ-TOOL-261
  Scenario Outline: FetchUrl does not follow a redirect to an internal address (<target>)
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the policy also grants Network.Http
    And a web server on loopback
    And a running session
    And the model will call FetchUrl with:
      """
      {"url": "${WEB}/redirect-host/<target>/plain"}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "Fetch it."
    Then the tool call is refused with a readable reason

    Examples:
      | target          |
      | 169.254.169.254 |
      | 10.0.0.1        |

  @REQ-TOOL-261
  Scenario: FetchUrl does not follow a redirect to a host the policy's domain rules refuse
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And a web server on loopback
    And the policy lets HttpRequest reach only "127.0.0.1"
    And a running session
    And the model will call FetchUrl with:
      """
      {"url": "${WEB}/redirect-host/localhost/plain"}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "Fetch it."
    Then the tool call is refused with a readable reason
    And the web server received no request for "/plain"

  @REQ-TOOL-262
  Scenario: FetchUrl is not offered without Network.Http
    Given a running session
    And the model will answer "I cannot fetch pages."
    When the client starts the task "Read a page."
    Then the task completes after 1 model request
    And the model is not offered the function "FetchUrl"

  @REQ-TOOL-263
  Scenario: ExecuteCode runs Python under the real default grant
    Given the runtime's machine has a Python interpreter
    And the policy grants Code.Execute as the real Policy Service does
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import sys\nprint('answer', 6 * 7)\nprint(sys.version_info.major >= 3)", "description": "Compute the answer"}
      """
    And the model will then answer "It is 42."
    When the client starts the task "Compute the answer."
    Then the tool call succeeds with a result containing "answer 42"
    And the tool call succeeds with a result containing "True"

  @REQ-TOOL-264
  Scenario: ExecuteCode in a language the policy does not list is denied
    Given the policy grants Code.Execute for "javascript" only
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "open('made-by-code.txt', 'w').write('x')", "description": "Run the code"}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "Run it."
    Then the scripted tool call is denied
    And the workspace has no file "made-by-code.txt"

  @REQ-TOOL-265
  Scenario: ExecuteCode ends code running past maxExecutionTimeSeconds
    Given the runtime's machine has a Python interpreter
    And the policy grants Code.Execute with at most 1 second of execution
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import time\ntime.sleep(3)\nprint('finished')", "timeout_seconds": 120, "description": "Run the code"}
      """
    And the model will then answer "Too slow."
    When the client starts the task "Wait a minute."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT"

  @REQ-TOOL-266
  Scenario: code reaches no server when allowCodeNetwork is false
    Given the runtime's machine has a Python interpreter
    And the policy grants Code.Execute as the real Policy Service does
    And a web server on loopback
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import urllib.request\ntry:\n    print(urllib.request.urlopen('${WEB}/plain', timeout=5).read().decode())\nexcept Exception as error:\n    print('blocked:', type(error).__name__)", "description": "Run the code"}
      """
    And the model will then answer "No network."
    When the client starts the task "Fetch from code."
    Then the tool call result does not contain "Hello from the web fake"
    And the web server received no request for "/plain"

  @REQ-TOOL-266
  Scenario: code reaches no server when allowCodeNetwork is false, even where the runtime admits loopback
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the runtime's machine has a Python interpreter
    And the policy grants Code.Execute as the real Policy Service does
    And a web server on loopback
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import urllib.request\ntry:\n    print(urllib.request.urlopen('${WEB}/plain', timeout=5).read().decode())\nexcept Exception as error:\n    print('blocked:', type(error).__name__)", "description": "Run the code"}
      """
    And the model will then answer "No network."
    When the client starts the task "Fetch from code."
    Then the tool call result does not contain "Hello from the web fake"
    And the web server received no request for "/plain"

  @REQ-TOOL-271
  Scenario: code reaches a server the runtime admits when allowCodeNetwork is true
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the runtime's machine has a Python interpreter
    And the policy grants Code.Execute as the real Policy Service does, with allowCodeNetwork set to "true"
    And a web server on loopback
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import urllib.request\nprint(urllib.request.urlopen('${WEB}/plain', timeout=5).read().decode())", "description": "Run the code"}
      """
    And the model will then answer "Fetched."
    When the client starts the task "Fetch from code."
    Then the tool call succeeds with a result containing "Hello from the web fake"

  @REQ-TOOL-272
  Scenario Outline: ExecuteCode is denied when the Code.Execute entry's <field> keep it out of the project folder
    Given the policy grants Code.Execute as the real Policy Service does, with <field> set to '<paths>'
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "open('made-by-code.txt', 'w').write('x')", "description": "Run the code"}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "Run it."
    Then the scripted tool call is denied
    And the workspace has no file "made-by-code.txt"

    Examples:
      | field        | paths          |
      | blockedPaths | ["."]          |
      | allowedPaths | ["elsewhere/"] |

  @REQ-TOOL-267
  Scenario: ExecuteCode is not offered without Code.Execute
    Given a running session
    And the model will answer "I cannot run code."
    When the client starts the task "Run some code."
    Then the task completes after 1 model request
    And the model is not offered the function "ExecuteCode"

  @REQ-TOOL-268
  Scenario: WebSearch lists the search endpoint's first results
    Given the runtime is configured with the kit's search endpoint
    And the policy also grants Search.Web
    And a running session
    And the model will call WebSearch with:
      """
      {"query": "rust sandbox", "max_results": 3}
      """
    And the model will then answer "Found them."
    When the client starts the task "Search the web."
    Then the tool call result lists the first 3 search results for "rust sandbox"
    And the search endpoint was asked for "rust sandbox"

  @REQ-TOOL-268
  Scenario: WebSearch lists five results when the model names no number
    Given the runtime is configured with the kit's search endpoint
    And the policy also grants Search.Web
    And a running session
    And the model will call WebSearch with:
      """
      {"query": "tokio"}
      """
    And the model will then answer "Found them."
    When the client starts the task "Search the web."
    Then the tool call result lists the first 5 search results for "tokio"

  @REQ-TOOL-269
  Scenario: WebSearch is not offered without Search.Web
    Given the runtime is configured with the kit's search endpoint
    And a running session
    And the model will answer "I cannot search."
    When the client starts the task "Search the web."
    Then the task completes after 1 model request
    And the model is not offered the function "WebSearch"

  @REQ-TOOL-269
  Scenario: WebSearch is not offered without a search backend
    Given the policy also grants Search.Web
    And a running session
    And the model will answer "I cannot search."
    When the client starts the task "Search the web."
    Then the task completes after 1 model request
    And the model is not offered the function "WebSearch"

  @REQ-TOOL-270
  Scenario: arguments outside their bounds are refused before anything is fetched, run or searched
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the runtime is configured with the kit's search endpoint
    And the policy also grants Network.Http
    And the policy also grants Search.Web
    And the policy grants Code.Execute as the real Policy Service does
    And a running session
    And the model will call these tools in one answer:
      | tool        | arguments                                                                     |
      | FetchUrl    | {"url": "${WEB}/plain", "timeout_seconds": 121}                               |
      | ExecuteCode | {"code": "open('made-by-code.txt', 'w').write('x')", "timeout_seconds": 601} |
      | WebSearch   | {"query": "tokio", "max_results": 11}                                         |
    And the model will then answer "Out of bounds."
    When the client starts the task "Try everything."
    Then every tool call fails with errorCode "INVALID_REQUEST"
    And the web server received no request for "/plain"
    And the web server received no request for "/search"
    And the workspace has no file "made-by-code.txt"

  @REQ-TOOL-273
  Scenario: an image the code writes to COWORK_OUTPUT_DIR goes back to the model like ViewImage's
    Given the runtime's machine has a Python interpreter
    And the gateway takes image parts
    And the policy grants Code.Execute as the real Policy Service does
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import os\npath = os.path.join(os.environ['COWORK_OUTPUT_DIR'], 'chart.png')\nopen(path, 'wb').write(bytes.fromhex('89504E470D0A1A0A0000000D4948445200000001'))\nprint('drawn')", "description": "Draw a chart"}
      """
    And the model will then answer "A chart."
    When the client starts the task "Draw a chart."
    Then the tool call succeeds with a result containing "drawn"
    And the model sees a "image/png" image holding the bytes "89 50 4E 47 0D 0A 1A 0A 00 00 00 0D 49 48 44 52 00 00 00 01"

  @REQ-TOOL-274
  Scenario: where the gateway takes no image parts, the code's image is named but not sent
    Given the runtime's machine has a Python interpreter
    And the policy grants Code.Execute as the real Policy Service does
    And a running session
    And the model will call ExecuteCode with:
      """
      {"code": "import os\npath = os.path.join(os.environ['COWORK_OUTPUT_DIR'], 'chart.png')\nopen(path, 'wb').write(bytes.fromhex('89504E470D0A1A0A0000000D4948445200000001'))", "description": "Run the code"}
      """
    And the model will then answer "A chart."
    When the client starts the task "Draw a chart."
    Then the tool call succeeds with a result containing "chart.png"
    And the model is shown no image
