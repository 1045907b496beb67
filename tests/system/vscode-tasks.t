#!/bin/bash
# The extensions' tasks (Cline, Roo Code; adapters/vscode-tasks/) through
# the real binaries: the realgen corpus the real cline@2.18.0 wrote (its
# embedded extension core 3.82.0) as ~/.cline, the same tasks under a
# Remote-SSH server's and under Roo Code's storage, the project's fixture
# task (both tokensIn conventions, cancelled rows, deleted_api_reqs, a tmp
# file beside it), and live: one row saved the extension's way (tmp file +
# rename) request-only, then provisional (tokensOut 1), then final. The
# editor of each task (status per root, the session report's origin), and
# Roo Code's custom storage path from settings.json: JSONC, a torn file, a
# change while running, a server's Machine/ settings, install's note.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
once() { "$D" --once 2>>"$T/once.err"; }
fresh() { stop_daemon; rm -rf "$XDG_STATE_HOME/agentmeterd" "$HOME"/.cline "$HOME"/.vscode-server "$HOME"/.config; }
sums() { "$C" report model --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens]'; }
events_of() { "$C" report model --harness "$1" --json 2>/dev/null | jq -c '.totals.events'; }
EXT=User/globalStorage

# ---- realgen: what cline@2.18.0 wrote itself ----
RG=$AM_SAMPLES/realgen/cline-2.18.0/cline-home
if [ -d "$RG/data/tasks" ]; then
	want=$(jq -c '[.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens]' "$RG/../disk-totals.json")
	is "$want" "[9,63875,3795,30272,2024]" "realgen: disk-totals.json says 9 calls, 63,875 / 3,795 / 30,272 / 2,024"
	cp -r "$RG" "$HOME/.cline"; chmod -R u+w "$HOME/.cline"
	once >/dev/null; is "$?" 0 "realgen: --once exits 0"
	is "$(sums)" "$want" "realgen as ~/.cline: the figures Cline wrote"
	is "$(events_of cline),$(events_of roo)" "9,0" "realgen as ~/.cline: harness cline"
	is "$("$C" report project --json 2>/dev/null | jq -c '[.rows[] | [(.key | sub(".*/"; "")), .events]] | sort')" \
		'[["alpha",6],["beta",3]]' "realgen: projects from state/taskHistory.json's cwdOnTaskInitialization"
	out=$(once 2>&1)
	is "$(sums)" "$want" "realgen: a second run adds nothing"
	fresh
	mkdir -p "$HOME/.vscode-server/data/$EXT/saoudrizwan.claude-dev"
	cp -r "$RG/data/tasks" "$HOME/.vscode-server/data/$EXT/saoudrizwan.claude-dev/tasks"
	once >/dev/null
	is "$(sums)" "$want" "realgen under ~/.vscode-server (Remote-SSH): the same"
	fresh
	# the same calls as Roo Code and Kilo Code write them: tokensIn the whole
	# prompt, cache reads and writes included, whatever the provider
	roo_way() { # roo_way DIR: rewrites every task's rows in place
		python3 - "$1" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*/ui_messages.json"):
    rows = json.load(open(f))
    for r in rows:
        if r.get("say") != "api_req_started":
            continue
        t = json.loads(r["text"])
        if "tokensIn" in t and (r.get("modelInfo") or {}).get("providerId") != "openai":
            t["tokensIn"] += t.get("cacheReads", 0) + t.get("cacheWrites", 0)
        r["text"] = json.dumps(t)
    json.dump(rows, open(f, "w"))
PY
	}
	mkdir -p "$HOME/.config/Code/$EXT/rooveterinaryinc.roo-cline"
	cp -r "$RG/data/tasks" "$HOME/.config/Code/$EXT/rooveterinaryinc.roo-cline/tasks"
	chmod -R u+w "$HOME/.config"; roo_way "$HOME/.config/Code/$EXT/rooveterinaryinc.roo-cline/tasks"
	once >/dev/null
	is "$(sums)" "$want" "realgen written Roo Code's way, under its storage: the same"
	is "$(events_of roo),$(events_of cline)" "9,0" "under Roo Code's storage: harness roo"
	fresh
	mkdir -p "$HOME/.cursor-server/data/$EXT/kilocode.kilo-code"
	cp -r "$RG/data/tasks" "$HOME/.cursor-server/data/$EXT/kilocode.kilo-code/tasks"
	chmod -R u+w "$HOME/.cursor-server"; roo_way "$HOME/.cursor-server/data/$EXT/kilocode.kilo-code/tasks"
	once >/dev/null
	is "$(sums)" "$want" "realgen written Kilo Code's way, under its storage (a Cursor server): the same"
	is "$(events_of kilo),$(events_of cline)" "9,0" "under Kilo Code's storage: harness kilo"
	rm -rf "$HOME/.cursor-server"; fresh
else
	skip "no realgen samples at $RG"
fi

# ---- the project's fixture task, in VS Code's storage ----
E=$FIX/vscode-tasks/expected.json
mkdir -p "$HOME/.config/Code/$EXT/saoudrizwan.claude-dev"
cp -r "$FIX/vscode-tasks/tasks" "$HOME/.config/Code/$EXT/saoudrizwan.claude-dev/tasks"
once >/dev/null
is "$(sums)" "$(jq -c '[.events, .input, .output, .cache_read, .cache_write]' "$E")" \
	"fixture: openai minus its cached tokens, anthropic/openai-native as written, no cancelled row, deleted_api_reqs once, no tmp file"
fresh

# ---- live: one row the extension's way ----
start_daemon; ok $? "daemon up"
TD=$HOME/.cline/data/tasks/1800000000000
mkdir -p "$TD"
row() { # row TEXT-JSON: the task's ui_messages.json with one api_req_started row, saved tmp + rename
	jq -nc --arg t "$1" '[{ts:1800000000000,type:"say",say:"task",text:"go"},
		{ts:1800000000100,type:"say",say:"api_req_started",text:$t,
		 modelInfo:{providerId:"anthropic",modelId:"claude-sonnet-4-5-20250929",mode:"act"}}]' >"$TD/ui_messages.json.tmp.1.x.json"
	mv "$TD/ui_messages.json.tmp.1.x.json" "$TD/ui_messages.json"
}
row '{"request":"go"}'
row '{"request":"go","tokensIn":900,"tokensOut":1,"cacheWrites":64,"cacheReads":5000,"cost":0.004}'
wait_until 8 holds '[ "$(sums)" = "[1,900,1,5000,64]" ]'
is "$(sums)" "[1,900,1,5000,64]" "live: the provisional row (tokensOut 1)"
row '{"request":"go","tokensIn":900,"tokensOut":250,"cacheWrites":64,"cacheReads":5000,"cost":0.0082}'
wait_until 8 holds '[ "$(sums)" = "[1,900,250,5000,64]" ]'
is "$(sums)" "[1,900,250,5000,64]" "live: the final usage replaces it: one call, tokensOut 250"
# a resume appends to the same task: a new row, saved 30 times while it streams
R1='{"request":"go","tokensIn":900,"tokensOut":250,"cacheWrites":64,"cacheReads":5000,"cost":0.0082}'
for i in $(seq 30); do
	jq -nc --arg a "$R1" --arg i "$i" '[{ts:1800000000000,type:"say",say:"task",text:"go"},
		{ts:1800000000100,type:"say",say:"api_req_started",text:$a,modelInfo:{providerId:"anthropic",modelId:"claude-sonnet-4-5-20250929"}},
		{ts:1800000000200,type:"ask",ask:"resume_task",text:""},
		{ts:1800000000300,type:"say",say:"api_req_started",
		 text:(if ($i|tonumber) < 30 then "{\"request\":\"[TASK RESUMPTION]\"}" else "{\"request\":\"[TASK RESUMPTION]\",\"tokensIn\":12000,\"tokensOut\":40,\"cacheWrites\":0,\"cacheReads\":3000,\"cost\":0}" end),
		 modelInfo:{providerId:"openai",modelId:"fake-gpt"}},
		{ts:1800000000400,type:"say",say:"text",text:("partial " + $i),partial:true}]' >"$TD/ui_messages.json.tmp.$i.x.json"
	mv "$TD/ui_messages.json.tmp.$i.x.json" "$TD/ui_messages.json"
done
wait_until 8 holds '[ "$(sums)" = "[2,9900,290,8000,64]" ]'
is "$(sums)" "[2,9900,290,8000,64]" "live: the resumed call once (openai: 12,000 minus its 3,000 cached), after 30 saves"
rm -rf "$TD"
sleep 0.5
is "$(sums)" "[2,9900,290,8000,64]" "live: a task deleted after being counted keeps its calls"
like "$("$C" status 2>/dev/null)" "Roo Code (roo)" "status lists Roo Code"
stop_daemon

# ---- the editor of each task, and the extensions' custom storage path ----
fresh
EV=$(jq '.events' "$E")
for ed in ".config/Code" ".vscode-server/data"; do
	mkdir -p "$HOME/$ed/$EXT/saoudrizwan.claude-dev/tasks"
done
cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$HOME/.config/Code/$EXT/saoudrizwan.claude-dev/tasks/1700000000000"
cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$HOME/.vscode-server/data/$EXT/saoudrizwan.claude-dev/tasks/1700000000001"
# Roo Code moved by its setting in VS Code's settings.json (JSONC)
STORE=$T/roo-store
mkdir -p "$STORE/tasks" "$HOME/.config/Code/User"
cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$STORE/tasks/1700000000002"
# and Kilo Code by its own (tasks/<id>/ under it, beside Kilo's other files)
KSTORE=$T/kilo-store
mkdir -p "$KSTORE/tasks" "$KSTORE/settings"; echo '{}' >"$KSTORE/settings/custom_modes.json"
cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$KSTORE/tasks/1700000000005"
printf '%s\n' '// VS Code user settings' '{' '	"editor.fontSize": 14, /* big */' \
	"	\"roo-cline.customStoragePath\": \"$STORE/\"," "	\"kilo-code.customStoragePath\": \"$KSTORE\"," \
	'	"files.exclude": { "**/.git": true, },' '}' \
	>"$HOME/.config/Code/User/settings.json"
# the Remote-SSH server's settings.json, torn
printf '{ "roo-cline.customStoragePath": "/nowhere",\n "a": [1,\n' >"$HOME/.vscode-server/data/User/settings.json"
start_daemon; ok $? "editors: daemon up"
wait_until 8 holds '[ "$(events_of cline),$(events_of roo),$(events_of kilo)" = "$((2 * EV)),$EV,$EV" ]'
is "$(events_of cline),$(events_of roo),$(events_of kilo)" "$((2 * EV)),$EV,$EV" \
	"editors: a task in VS Code and one on the Remote-SSH host (cline), one in Roo Code's and one in Kilo Code's custom storage"
origins() { "$C" "$@" report session --json 2>/dev/null | jq -c '[.rows[] | [.harness, .session, .origin]] | sort'; }
want_origins='[["cline","1700000000000","Code"],["cline","1700000000001","vscode-server"],["kilo","1700000000005","Code"],["roo","1700000000002","Code"]]'
is "$(origins)" "$want_origins" "report session --json: each task's editor as its origin (the custom storage path's: the editor whose settings named it)"
like "$("$C" report session 2>/dev/null | grep 1700000000001)" "vscode-server" "report session (text): the origin column"
st=$("$C" status 2>/dev/null)
like "$(grep -F "$HOME/.config/Code/$EXT/saoudrizwan.claude-dev/tasks " <<<"$st")" "[Code]  files 1, rows $EV" "status: VS Code's root, its task and rows"
like "$(grep -F "$HOME/.vscode-server/data/$EXT/saoudrizwan.claude-dev/tasks " <<<"$st")" "[vscode-server]  files 1, rows $EV" "status: the Remote-SSH server's root, its task and rows"
like "$(grep -F "$STORE/tasks " <<<"$st")" "from config $HOME/.config/Code/User/settings.json roo-cline.customStoragePath [Code]  files 1, rows $EV" \
	"status: the custom storage root and why it is there"
like "$(grep -F "$KSTORE " <<<"$st")" "from config $HOME/.config/Code/User/settings.json kilo-code.customStoragePath [Code]  files 1, rows $EV" \
	"status: Kilo Code's custom storage root"
like "$(grep -F 'note  vscode-server:' <<<"$st")" "$HOME/.vscode-server/data/User/settings.json is not a JSON object" \
	"status: the torn settings.json said in a note"
! grep -qF "/nowhere" <<<"$st"; ok $? "the torn settings.json made no root"
# the setting changed while the daemon runs: the new path is followed at once
STORE2=$T/roo-store2
mkdir -p "$STORE2/tasks"; cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$STORE2/tasks/1700000000003"
sed -i "s|$STORE/|$STORE2|" "$HOME/.config/Code/User/settings.json"
wait_until 8 holds '[ "$(events_of roo)" = "$((2 * EV))" ]'
is "$(events_of roo)" "$((2 * EV))" "settings.json edited while running: the new storage path is read (its task counted, the old one kept)"
like "$("$C" status 2>/dev/null | grep -F "$STORE2/tasks ")" "roo-cline.customStoragePath [Code]" "status: the new custom storage root"
# a settings file that appears later on the Remote-SSH host (its Machine/ settings, a new directory)
STORE3=$T/roo-store3
mkdir -p "$STORE3/tasks"; cp -r "$FIX/vscode-tasks/tasks/1700000000000" "$STORE3/tasks/1700000000004"
mkdir -p "$T/machine"; echo "{\"roo-cline.customStoragePath\": \"$STORE3\"}" >"$T/machine/settings.json"
mv "$T/machine" "$HOME/.vscode-server/data/Machine"
wait_until 8 holds '[ "$(events_of roo)" = "$((3 * EV))" ]'
is "$(events_of roo)" "$((3 * EV))" "a server's Machine/settings.json moved in while running: its storage path read"
is "$(origins | jq -c '.[] | select(.[1] == "1700000000004") | .[2]')" '"vscode-server"' "... its task's origin the server"
stop_daemon
# the first store is no root any more (no setting names it): its task keeps
# its calls but no origin; the origin is where a root finds the task now
is "$(origins --socket /nonexistent)" '[["cline","1700000000000","Code"],["cline","1700000000001","vscode-server"],["kilo","1700000000005","Code"],["roo","1700000000002",null],["roo","1700000000003","Code"],["roo","1700000000004","vscode-server"]]' \
	"report session from the ledger itself (no daemon): the same origins (none for the store no setting names now)"
# install notes the settings-derived roots in the drop-in
mkdir -p "$T/fakebin"; printf '#!/bin/sh\nexit 0\n' >"$T/fakebin/systemctl"; chmod +x "$T/fakebin/systemctl"
out=$(PATH="$T/fakebin:$PATH" "$C" install --no-start 2>&1); ok $? "install --no-start (systemctl faked)"
like "$out" "noted roo $STORE2/tasks from config $HOME/.config/Code/User/settings.json roo-cline.customStoragePath [Code]" "install says which root the settings named"
like "$(cat "$XDG_CONFIG_HOME/systemd/user/agentmeterd.service.d/50-environment.conf" 2>/dev/null)" \
	"#   roo $STORE3/tasks from config $HOME/.vscode-server/data/Machine/settings.json roo-cline.customStoragePath [vscode-server]" \
	"the drop-in records it (as a comment: the daemon reads the file itself)"
rm -rf "$STORE" "$STORE2" "$STORE3" "$KSTORE" "$T/fakebin"; fresh
done_testing
