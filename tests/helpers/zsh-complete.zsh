# zsh -f capm.zsh DIR LINE...: completes each LINE in one interactive zsh (a pty), with DIR/_loom on $fpath, and
# prints each line's candidates as "LINE\tCANDIDATE" (nothing for a line without any).
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; RPROMPT=''; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' insert-tab false; bindkey '^U' kill-whole-line"
zpty -w z "__cw() { print -r -- '@@''MARK@@'; zle complete-word; print -r -- '@@''MARK@@' }; zle -N __cw; bindkey '^I' __cw"
zpty -w z 'compadd () { local -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "@@""HIT@@$h"; done }'
local line request
for request in "${@[2,-1]}"; do
  zpty -n -w z "$request"$'\t'
  integer marks=0
  while (( marks < 2 )) && zpty -r z line; do
    [[ $line == *@@MARK@@* ]] && (( marks++ ))
    [[ $line == *@@HIT@@* ]] && print -r -- "$request"$'\t'"${${line##*@@HIT@@}%%$'\r'}"
  done
  zpty -n -w z $'\C-u'
done
zpty -d z
