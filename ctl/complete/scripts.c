/* The completion scripts `agentmeterctl completion bash|zsh|fish` prints
 * (and the Debian package installs). Each is thin: it hands the words typed
 * so far to `agentmeterctl __complete` (complete.h) and offers what comes
 * back, so the lists are never copied into the scripts. */
#include <string.h>

#include "complete/complete.h"

static const char bash_script[] =
        "# bash completion for agentmeterctl (printed by `agentmeterctl completion bash`).\n"
        "# The candidates come from agentmeterctl itself: `agentmeterctl __complete WORDS...`.\n"
        "_agentmeterctl() {\n"
        "\tlocal line=${COMP_LINE:0:COMP_POINT} cur=${COMP_WORDS[COMP_CWORD]} prog last keep= w\n"
        "\tlocal -a words out\n"
        "\tlocal IFS=$' \\t\\n' safe='^[A-Za-z0-9_./:@%+=,-]*$'\n"
        "\tread -r -a words <<<\"$line\"\n"
        "\t[[ -z $line || $line =~ [[:space:]]$ ]] && words+=(\"\")\n"
        "\t((${#words[@]} >= 2)) || words+=(\"\")\n"
        "\tprog=${words[0]}\n"
        "\t[[ $prog == \"~/\"* ]] && prog=$HOME/${prog#\"~/\"}\n"
        "\tIFS=$'\\n' read -r -d '' -a out < <(\"$prog\" __complete \"${words[@]:1}\" 2>/dev/null)\n"
        "\tCOMPREPLY=()\n"
        "\tlast=${words[${#words[@]}-1]}\n"
        "\t# what bash keeps of the word when it splits at = or : (\"--tz=\" of \"--tz=Eur\")\n"
        "\t[[ $last == *\"$cur\" ]] && keep=${last%\"$cur\"}\n"
        "\tcase ${out[0]-} in\n"
        "\t:files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
        "\t:dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
        "\tesac\n"
        "\tfor w in \"${out[@]}\"; do\n"
        "\t\tw=${w%%$'\\t'*}\n"
        "\t\t[[ -n $keep && $w == \"$keep\"* ]] && w=${w#\"$keep\"}\n"
        "\t\t# inserted exactly: quoted unless made only of bytes no shell rule touches\n"
        "\t\t[[ $w =~ $safe ]] || printf -v w '%q' \"$w\"\n"
        "\t\tCOMPREPLY+=(\"$w\")\n"
        "\tdone\n"
        "}\n"
        "complete -F _agentmeterctl agentmeterctl\n";

static const char zsh_script[] =
        "#compdef agentmeterctl\n"
        "# zsh completion for agentmeterctl (printed by `agentmeterctl completion zsh`).\n"
        "# The candidates come from agentmeterctl itself: `agentmeterctl __complete WORDS...`.\n"
        "_agentmeterctl() {\n"
        "  local -a out vals disp\n"
        "  local w word desc keep=\n"
        "  out=(\"${(@f)$(${words[1]} __complete \"${(@)words[2,CURRENT]}\" 2>/dev/null)}\")\n"
        "  case ${out[1]-} in\n"
        "    (:files) _files; return ;;\n"
        "    (:dirs) _files -/; return ;;\n"
        "  esac\n"
        "  if [[ $PREFIX == --*=* ]]; then\n"
        "    keep=${PREFIX%%=*}=\n"
        "    compset -P '*='\n"
        "  fi\n"
        "  for w in \"${out[@]}\"; do\n"
        "    [[ -z $w ]] && continue\n"
        "    word=${w%%$'\\t'*}\n"
        "    desc=\n"
        "    [[ $w == *$'\\t'* ]] && desc=${w#*$'\\t'}\n"
        "    [[ -n $keep ]] && word=${word#\"$keep\"}\n"
        "    vals+=(\"$word\")\n"
        "    disp+=(\"$word${desc:+  -- $desc}\")\n"
        "  done\n"
        "  # compadd quotes each value as the line needs: inserted exactly\n"
        "  (( ${#vals} )) && compadd -l -d disp -a vals\n"
        "}\n"
        "if [[ ${zsh_eval_context[-1]-} == loadautofunc ]]; then\n"
        "  _agentmeterctl \"$@\"\n"
        "else\n"
        "  compdef _agentmeterctl agentmeterctl\n"
        "fi\n";

static const char fish_script[] =
        "# fish completion for agentmeterctl (printed by `agentmeterctl completion fish`).\n"
        "# The candidates come from agentmeterctl itself: `agentmeterctl __complete WORDS...`.\n"
        "function __agentmeterctl_complete\n"
        "    set -l cur (commandline -ct)\n"
        "    set -l tokens (commandline -opc) \"$cur\"\n"
        "    set -l out ($tokens[1] __complete $tokens[2..-1] 2>/dev/null)\n"
        "    switch \"$out[1]\"\n"
        "        case :files\n"
        "            __fish_complete_path \"$cur\"\n"
        "        case :dirs\n"
        "            __fish_complete_directories \"$cur\"\n"
        "        case '*'\n"
        "            printf '%s\\n' $out\n"
        "    end\n"
        "end\n"
        "complete -c agentmeterctl -f -a '(__agentmeterctl_complete)'\n";

const char *complete_script(const char *shell)
{
        if (!shell)
                return NULL;
        if (strcmp(shell, "bash") == 0)
                return bash_script;
        if (strcmp(shell, "zsh") == 0)
                return zsh_script;
        if (strcmp(shell, "fish") == 0)
                return fish_script;
        return NULL;
}
