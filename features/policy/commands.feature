Feature: Commands the policy allows and blocks
  A RunCommand line is judged whole: every program it would start — across `;`, `&&`, `||`,
  `|`, subshells, `$(…)`, backticks, redirection targets, `FOO=1` prefixes, `env`/`xargs`/
  `timeout` wrappers, absolute or relative paths — must pass allowedCommands and
  blockedCommands, and what cannot be proven safe is denied (local-agent-host.md §8.2, §8.4
  and its open question in §13).

  @REQ-POL-010 @posix-shell
  Scenario Outline: every program of "<line>" must be allowed (<construct>)
    Given the policy allows the commands "ls, echo, cat, grep, wc, env, xargs, timeout, ionice, eval, find" and blocks the commands ""
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call is denied
    And the workspace has no file "pwned"

    Examples:
      | construct                  | line                              |
      | sequence ;                 | ls; touch pwned                   |
      | and-list &&                | ls && touch pwned                 |
      | or-list \|\|               | ls \|\| touch pwned               |
      | pipeline \|                | echo x \| touch pwned             |
      | background &               | touch pwned & ls                  |
      | subshell                   | (touch pwned)                     |
      | brace group                | { touch pwned; }                  |
      | command substitution       | echo $(touch pwned)               |
      | substitution in quotes     | echo "$(touch pwned)"             |
      | backticks                  | echo `touch pwned`                |
      | redirection target         | ls > $(touch pwned)               |
      | assignment prefix          | FOO=1 touch pwned                 |
      | env wrapper                | env touch pwned                   |
      | env wrapper with variables | env A=1 touch pwned               |
      | xargs wrapper              | echo pwned \| xargs touch         |
      | timeout wrapper            | timeout 5 touch pwned             |
      | ionice wrapper             | ionice touch pwned                |
      | eval of a literal          | eval touch pwned                  |
      | find -exec                 | find . -maxdepth 0 -exec touch pwned \\; |
      | env wrapper, allowed operand | env touch ls                    |
      | absolute binary path       | /usr/bin/touch pwned              |
      | relative binary path       | ./touch pwned                     |
      | quoted program name        | "tou"ch pwned                     |
      | escaped program name       | tou\\ch pwned                     |
      | if body                    | if ls; then touch pwned; fi       |
      | newline-free loop body     | for f in a; do touch pwned; done  |
      | function body              | ls() { touch pwned; }; ls         |
      | escaped dollar in quotes   | echo "\\$"; touch pwned; echo "x"  |

  @REQ-POL-010 @posix-shell
  Scenario Outline: a line whose programs are all allowed runs (<construct>)
    Given the policy allows the commands "ls, echo, cat, grep, wc, env, xargs, timeout, mapfile, nice, command" and blocks the commands ""
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call runs

    Examples:
      | construct                     | line                          |
      | one program                   | ls                            |
      | and-list                      | echo hi && ls                 |
      | pipeline                      | echo hi \| grep h \| wc -l    |
      | assignment prefix             | FOO=1 ls                      |
      | env wrapper                   | env A=1 ls                    |
      | redirection                   | echo hi > out.txt             |
      | absolute binary path          | /bin/ls                       |
      | single quotes                 | echo 'a b'                    |
      | double quotes                 | echo "a $HOME b"              |
      | braced parameter              | echo ${HOME}                  |
      | positional parameter          | echo ${1}                     |
      | special parameters            | echo $? $#                    |
      | locale string                 | echo $"hi"                    |
      | backslash in backticks        | echo `echo a\\tb`             |
      | nice wrapper                  | nice -n 5 ls                  |
      | timeout with a long option    | timeout --signal=KILL 5 ls    |
      | command -v                    | command -v ls                 |
      | output to a descriptor        | echo hi >&2                   |
      | default value                 | echo ${HOME:-none}            |
      | quoted default                | echo ${X:-'a b'}              |
      | quoted brace in a default     | echo ${X:-'}'}                |
      | suffix removal                | echo ${HOME%/}                |
      | expansion in a default        | echo ${X:-${HOME}}            |
      | old arithmetic in a default   | echo ${X:-$[1+1]}             |
      | escaped dollar in a default   | echo ${X:-\\$[Y]}            |
      | old arithmetic after a command | echo hi; echo $[1+1]        |
      | ANSI-C quotes                 | echo $'a b'                   |
      | mapfile with an option        | echo a \| mapfile -t lines    |

  @REQ-POL-010 @posix-shell
  Scenario Outline: a multi-word allowed entry admits its program with no other leading arguments (<construct>)
    Given the policy allows the commands "ls, touch safe.txt" and blocks the commands ""
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call is denied
    And the workspace has no file "pwned"

    Examples:
      | construct                         | line                           |
      | another argument                  | touch pwned                    |
      | the entry's word after a variable | X='pwned '; touch $X"safe.txt" |

  @REQ-POL-011 @posix-shell
  Scenario Outline: a multi-word blocked command matches on its leading arguments (<construct>)
    Given the policy allows the commands "" and blocks the commands "rm -rf, git push, curl"
    And the workspace file "scratch/keep.txt" contains "keep me"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Clean up."
    Then the RunCommand call is denied
    And the workspace folder "scratch" still exists

    Examples:
      | construct             | line                               |
      | the command itself    | rm -rf scratch                     |
      | absolute binary path  | /bin/rm -rf scratch                |
      | relative binary path  | ../../bin/rm -rf scratch           |
      | after ;               | ls; rm -rf scratch                 |
      | after &&              | true && rm -rf scratch             |
      | in a pipeline         | echo \| rm -rf scratch             |
      | in a subshell         | (rm -rf scratch)                   |
      | command substitution  | echo $(rm -rf scratch)             |
      | backticks             | echo `rm -rf scratch`              |
      | assignment prefix     | FOO=1 rm -rf scratch               |
      | env wrapper           | env rm -rf scratch                 |
      | xargs wrapper         | echo scratch \| xargs rm -rf       |
      | sh -c script          | sh -c 'rm -rf scratch'             |
      | find -exec action     | find scratch -maxdepth 0 -exec rm -rf {} + |
      | unknown argument      | rm -rf $TARGET                     |
      | escaped program name  | r\\m -rf scratch                   |
      | input glued to name   | rm</dev/null -rf scratch           |
      | glob class in the name | /bin/r[m] -rf scratch             |
      | glob class of two characters | /bin/r[lm] -rf scratch      |
      | program from a variable | R=rm; $R -rf scratch              |
      | second blocked entry  | git push --force origin main       |
      | single-word entry     | curl https://example.com/          |

  @REQ-POL-011
  Scenario Outline: a command that only shares the program of a blocked entry runs (<line>)
    Given the policy allows the commands "" and blocks the commands "rm -rf, git push, curl"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call runs

    Examples:
      | line                  |
      | rm -f missing.txt     |
      | git --version         |

  @REQ-POL-011 @posix-shell
  Scenario Outline: a blocked entry longer than the written command judges what its words expand to (<construct>)
    Given the policy allows the commands "" and blocks the commands "rm -rf scratch"
    And the workspace file "scratch/keep.txt" contains "keep me"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Clean up."
    Then the RunCommand call is denied
    And the workspace folder "scratch" still exists

    Examples:
      | construct                    | line                   |
      | a variable split in two words | X='-rf scratch'; rm $X |
      | a brace expansion            | rm {-rf,scratch}       |

  @REQ-POL-012 @posix-shell
  Scenario Outline: a line the policy cannot prove safe is denied (<construct>)
    Given the policy allows the commands "ls, echo, cat" and blocks the commands "rm -rf"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call is denied

    Examples:
      | construct                  | line                      |
      | here-document              | cat <<EOF                 |
      | program from a variable    | $CMD -la                  |
      | program from substitution  | $(echo ls)                |
      | glob as the program        | /bin/l? -la               |
      | process substitution       | cat <(ls)                 |
      | unbalanced quote           | echo "ls                  |
      | eval                       | eval ls                   |

  @REQ-POL-010 @cmd-shell
  Scenario Outline: every program of the cmd.exe line "<line>" must be allowed (<construct>)
    Given the policy allows the commands "dir, echo, type, findstr, cmd, call, start" and blocks the commands ""
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call is denied
    And the workspace has no file "pwned"

    Examples:
      | construct           | line                                        |
      | sequence &          | dir & md pwned                              |
      | and-list &&         | dir && md pwned                             |
      | or-list \|\|         | dir \|\| md pwned                            |
      | pipeline \|         | echo x \| md pwned                          |
      | block               | (md pwned)                                  |
      | if body             | if exist . (md pwned)                       |
      | else body           | if not exist . (echo no) else (md pwned)    |
      | for body            | for %i in (a) do md pwned                   |
      | for /f command      | for /f %i in ('md pwned') do echo %i        |
      | call                | call md pwned                               |
      | cmd /c              | cmd /c md pwned                             |
      | start               | start /b md pwned                           |
      | caret in the name   | m^d pwned                                   |
      | quoted name         | "md" pwned                                  |
      | echo-off prefix     | @md pwned                                   |
      | leading delimiters  | ,;md pwned                                  |
      | absolute path       | C:\\Windows\\System32\\cmd.exe /c md pwned |

  @REQ-POL-010 @cmd-shell
  Scenario Outline: a cmd.exe line whose programs are all allowed runs (<construct>)
    Given the policy allows the commands "dir, echo, type, findstr, cmd, call, start" and blocks the commands ""
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call runs

    Examples:
      | construct   | line                            |
      | one program | dir                             |
      | and-list    | echo hi && dir                  |
      | pipeline    | echo hi \| findstr h            |
      | block       | (echo a & echo b)               |
      | for body    | for %i in (a b) do @echo %i     |
      | redirection | echo hi > out.txt               |
      | cmd /c      | cmd /c echo hi                  |

  @REQ-POL-011 @cmd-shell
  Scenario Outline: a multi-word blocked command matches on its leading arguments in a cmd.exe line (<construct>)
    Given the policy allows the commands "" and blocks the commands "rd /s, git push, curl"
    And the workspace file "scratch/keep.txt" contains "keep me"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Clean up."
    Then the RunCommand call is denied
    And the workspace folder "scratch" still exists

    Examples:
      | construct            | line                                 |
      | the command itself   | rd /s /q scratch                     |
      | other case           | RD /S /Q scratch                     |
      | the builtin's alias  | rmdir /s /q scratch                  |
      | switch glued on      | rd/s /q scratch                      |
      | caret in the name    | r^d /s /q scratch                    |
      | after &              | dir & rd /s /q scratch               |
      | after &&             | dir && rd /s /q scratch              |
      | in a pipeline        | echo x \| rd /s /q scratch           |
      | in a block           | (rd /s /q scratch)                   |
      | for body             | for %i in (scratch) do rd /s /q %i   |
      | call                 | call rd /s /q scratch                |
      | cmd /c               | cmd /c rd /s /q scratch              |
      | unknown argument     | rd %OPTIONS% scratch                 |
      | second blocked entry | git push --force origin main         |
      | single-word entry    | curl https://example.com/            |

  @REQ-POL-011 @cmd-shell
  Scenario Outline: a cmd.exe command that only shares the program of a blocked entry runs (<line>)
    Given the policy allows the commands "" and blocks the commands "rd /s, git push, curl"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call runs

    Examples:
      | line            |
      | rd missing      |
      | git --version   |

  @REQ-POL-012 @cmd-shell
  Scenario Outline: a cmd.exe line the policy cannot prove safe is denied (<construct>)
    Given the policy allows the commands "dir, echo, type" and blocks the commands "rd /s"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Run it."
    Then the RunCommand call is denied

    Examples:
      | construct                   | line            |
      | program from a variable     | %CMD% /a        |
      | program from delayed value  | !CMD! /a        |
      | part of a variable          | %PATH:~0,3%     |
      | unbalanced quote            | echo "dir       |
      | unbalanced parenthesis      | (dir            |

  @REQ-POL-017
  Scenario: the reason for a denied command reaches the model
    Given the policy allows the commands "ls, echo" and blocks the commands ""
    And a running session
    And the model will run the command "ls && touch pwned"
    And the model will then answer "I may not run touch."
    When the client starts the task "Run it."
    Then the RunCommand call is denied with error code "CAPABILITY_DENIED"
    And the model is told the RunCommand call was denied because of "touch"
