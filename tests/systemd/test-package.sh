# The Debian package under the real systemd --user (issue 26): make deb from
# this tree, lintian, then dpkg -i into overlays of /usr, /etc and /var/lib
# that live only in the harness's mount namespace (the host never sees the
# package), `systemctl --user enable --now agentmeterd` from the packaged
# unit, agentmeterctl install writing only the drop-in, and dpkg -r.
# Sourced by test-service.sh (its helpers: check, dcheck, poll, prop, has,
# AS, H, WORK, U, G, RUNUNITS, UNITS, PI).
PKGBUILD=$AM_SRCDIR/build-pkg
DEB=${AM_DEB:-}
if [ -z "$DEB" ] && [ -n "${AM_DEB_JOB:-}" ]; then
	# run.sh started make deb and lintian in the background (its deb.out,
	# lintian.out, and done when both ended): wait for them, up to 15 min
	for i in $(seq 4500); do [ -f "$AM_DEB_JOB/done" ] && break; sleep 0.2; done
	cp "$AM_DEB_JOB/deb.out" "$WORK/deb.out" 2>/dev/null
	cp "$AM_DEB_JOB/lintian.out" "$WORK/lintian.out" 2>/dev/null
	DEB=$(cat "$AM_DEB_JOB/done" 2>/dev/null)
elif [ -z "$DEB" ]; then
	if make -s -C "$AM_SRCDIR" deb BUILD="$PKGBUILD" > "$WORK/deb.out" 2>&1; then
		DEB=$(tail -n 1 "$WORK/deb.out"); case $DEB in /*) ;; *) DEB=$AM_SRCDIR/$DEB ;; esac
	fi
fi
check "make deb builds agentmeterd_<version>_<arch>.deb" \
	"[ -f '$DEB' ] && case '${DEB##*/}' in agentmeterd_*_$(dpkg --print-architecture).deb) true ;; *) false ;; esac ||
	 { tail -n 20 '$WORK/deb.out'; false; }"
echo "# package: $DEB"
if [ ! -f "$DEB" ]; then
	flunk "no package to install: the rest of the package checks cannot run"
	return 0 2>/dev/null || exit 1
fi
[ -n "${AM_DEB_JOB:-}" ] && [ -f "$WORK/lintian.out" ] ||
	lintian --info --display-info --pedantic --tag-display-limit 0 "$DEB" > "$WORK/lintian.out" 2>&1
sed 's/^/# lintian: /' "$WORK/lintian.out" | grep -v 'running with root privileges' | head -n 40
check "lintian: no error and no warning" "! grep -q '^[EW]: ' '$WORK/lintian.out'"
dpkg-deb -c "$DEB" | awk '{print $NF}' | sed 's|^\./|/|' > "$WORK/deb.files"
check "the package holds both programs, the user unit, both man pages, the completions and the docs" \
	"for f in /usr/bin/agentmeterd /usr/bin/agentmeterctl /usr/lib/systemd/user/agentmeterd.service \
	   /usr/share/man/man1/agentmeterctl.1.gz /usr/share/man/man8/agentmeterd.8.gz \
	   /usr/share/bash-completion/completions/agentmeterctl /usr/share/zsh/vendor-completions/_agentmeterctl \
	   /usr/share/fish/vendor_completions.d/agentmeterctl.fish /usr/share/doc/agentmeterd/README.md.gz \
	   /usr/share/doc/agentmeterd/copyright /usr/share/doc/agentmeterd/changelog.gz; do
	   grep -qx \"\$f\" '$WORK/deb.files' || { echo \"missing \$f\"; exit 1; }; done"
check "Depends is computed from the libraries (dh_shlibdeps): libjson-c, liblmdb, libsystemd" \
	"dpkg-deb -f '$DEB' Depends | tee /dev/stderr | grep -q 'libjson-c5.*liblmdb0.*libsystemd0'"

# ---- dpkg -i, in this namespace only
OVL=$WORK/ovl
mkdir -p "$OVL" && mount -t tmpfs -o mode=755 tmpfs "$OVL"
ovl_ok=0
for d in /usr /etc /var/lib; do
	od=$OVL/${d//\//_}; mkdir -p "$od.up" "$od.work"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$od.up,workdir=$od.work" "$d" || ovl_ok=1
done
check "overlays of /usr, /etc and /var/lib for the package (this namespace only)" "[ $ovl_ok -eq 0 ]"
rm -rf "$H/.local/state/agentmeterd" "$RUNUNITS/agentmeterd.service.d"
dpkg -i --no-triggers --log=/dev/null "$DEB" > "$WORK/dpkg-i.out" 2>&1; rc=$?
sed 's/^/#   dpkg -i: /' "$WORK/dpkg-i.out"
check "dpkg -i installs it" "[ $rc -eq 0 ] && [ \"\$(dpkg-query -W -f='\${Status}' agentmeterd)\" = 'install ok installed' ]"
PU=/usr/lib/systemd/user/agentmeterd.service
check "the packaged unit runs /usr/bin/agentmeterd" "grep -qx 'ExecStart=/usr/bin/agentmeterd' '$PU'"
AS systemctl --user daemon-reload
check "installed, enabled for no one" "[ \"\$(AS systemctl --user is-enabled agentmeterd.service)\" = disabled ]"
mkdir -p "$RUNUNITS/agentmeterd.service.d"
printf '[Service]\nTimeoutStartSec=20s\nTimeoutStopSec=10s\nLimitCORE=0\n' > "$RUNUNITS/agentmeterd.service.d/90-test.conf"
chown -R "$U:$G" "$XDG_RUNTIME_DIR/systemd"
AS systemctl --user daemon-reload
out=$(AS systemctl --user enable --now agentmeterd 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   enable --now: /'
dcheck "systemctl --user enable --now agentmeterd (the package's unit)" \
	"[ $rc -eq 0 ] && poll 10 '[ \"\$(prop SubState)\" = running ]' && [ \"\$(prop FragmentPath)\" = '$PU' ]"
dcheck "the running daemon is /usr/bin/agentmeterd" \
	"[ \"\$(readlink /proc/\$(prop MainPID)/exe)\" = /usr/bin/agentmeterd ]"
AS mkdir -p "$H/.pi/agent/sessions/--work-pkg-test--"
AS /usr/bin/python3 "$WORK/testlib/pi_call.py" header "$H/.pi/agent/sessions/--work-pkg-test--/p.jsonl" --cwd /work/pkg-test
AS /usr/bin/python3 "$WORK/testlib/pi_call.py" call "$H/.pi/agent/sessions/--work-pkg-test--/p.jsonl" --cost 0.5 --tokens 4321
ptok() { AS /usr/bin/agentmeterctl report daily --json --project /work/pkg-test 2>/dev/null | jq -e '.totals.total_tokens' 2>/dev/null; }
dcheck "/usr/bin/agentmeterctl report --project: the session's 4,321 tokens from the packaged daemon" \
	"poll 10 '[ \"\$(ptok)\" = 4321 ]'; echo \"got \$(ptok)\"; [ \"\$(ptok)\" = 4321 ]"

# ---- agentmeterctl install with the package's unit: only the drop-in
out=$(AS env PI_CODING_AGENT_DIR="$PI" /usr/bin/agentmeterctl install 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   install: /'
dcheck "agentmeterctl install says the unit is the package's and writes only the drop-in" \
	"[ $rc -eq 0 ] && grep -q 'using the unit of the Debian package agentmeterd: $PU' <<< \"\$out\" &&
	 [ ! -e '$UNITS/agentmeterd.service' ] && grep -qx 'Environment=\"PI_CODING_AGENT_DIR=$PI\"' '$UNITS/agentmeterd.service.d/50-environment.conf'"
dcheck "the restarted daemon has the recorded variable and still runs the package's unit" \
	"poll 10 '[ \"\$(prop SubState)\" = running ]' && has 'PI_CODING_AGENT_DIR=$PI' prop Environment &&
	 [ \"\$(prop FragmentPath)\" = '$PU' ]"
check "the installed bash completion is what agentmeterctl completion bash prints, and completes" \
	"AS /usr/bin/agentmeterctl completion bash | cmp - /usr/share/bash-completion/completions/agentmeterctl &&
	 [ \"\$(AS bash -c 'source /usr/share/bash-completion/completions/agentmeterctl; COMP_LINE=\"agentmeterctl rep\"; COMP_POINT=17; COMP_WORDS=(agentmeterctl rep); COMP_CWORD=1; _agentmeterctl; echo \"\${COMPREPLY[*]}\"')\" = 'report reprice' ]"
out=$(AS /usr/bin/agentmeterctl uninstall 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   uninstall: /'
check "uninstall removes the drop-in, keeps the package's unit and says so" \
	"[ $rc -eq 0 ] && [ ! -e '$UNITS/agentmeterd.service.d/50-environment.conf' ] && [ -f '$PU' ] &&
	 grep -q 'the unit of the Debian package agentmeterd stays' <<< \"\$out\" &&
	 [ \"\$(AS systemctl --user is-enabled agentmeterd.service)\" = disabled ]"
dpkg -r --no-triggers --log=/dev/null agentmeterd > "$WORK/dpkg-r.out" 2>&1; rc=$?
check "dpkg -r removes the programs and the unit" \
	"[ $rc -eq 0 ] && [ ! -e /usr/bin/agentmeterd ] && [ ! -e '$PU' ] || cat '$WORK/dpkg-r.out'"
rm -rf "$RUNUNITS/agentmeterd.service.d"
for d in /var/lib /etc /usr; do umount -l "$d" 2>/dev/null; done
umount -l "$OVL" 2>/dev/null
