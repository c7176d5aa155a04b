Feature: Service answers that write unset members as null or leave them out
  The real services differ in how they write what is unset: the Policy Service sends every
  unset capability scope field as null (requiresApproval: null means false), the Session
  Service leaves optional members out (INTEROP.md §3–§5). A runtime takes either, and the
  fakes answer each way here.

  @REQ-SES-022
  Scenario Outline: a session whose services write unset members <style> runs a task with a tool
    Given the services write unset members <style>
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client creates a session
    And the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the runtime reports tool_completed for ReadFile with a result containing "The launch code is 4-8-15-16."
    And the task_completed result is "The launch code is 4-8-15-16."

    Examples:
      | style     |
      | as-served |
      | verbose   |
      | omitted   |

  @REQ-SES-022
  Scenario Outline: a session restored from services that write unset members <style> goes on
    Given the services write unset members <style>
    And a running session
    And the model will answer "Hello."
    And the client has run the task "Say hello." to its end
    And the runtime process is killed
    And the model will answer "Still here."
    When the client resumes the session
    And the client starts another task "Are you there?"
    And the task finishes
    Then the task_completed result is "Still here."

    Examples:
      | style     |
      | verbose   |
      | omitted   |
