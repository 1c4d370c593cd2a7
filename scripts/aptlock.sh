# apt_locked CMD... runs an apt command, waiting while another process
# (unattended-upgrades, a second apt) holds the apt or dpkg lock: apt-get
# update gives up at once (exit 100) when the lock is held. The wait is
# bounded by MRC_APT_LOCK_WAIT seconds (default 300) and announced on
# stderr; other failures, and the lock still held at the end, fail as apt
# did, with apt's message. Sourced by scripts/test.sh.
apt_locked() {
	local limit=${MRC_APT_LOCK_WAIT:-300} step=${MRC_APT_LOCK_STEP:-5}
	local waited=0 rc err
	err=$(mktemp)
	while :; do
		rc=0
		"$@" 2>"$err" || rc=$?
		if [ "$rc" = 0 ] || ! grep -qE 'Could not get lock|Unable to (acquire|lock)' "$err"; then
			cat "$err" >&2
			rm -f "$err"
			return "$rc"
		fi
		if [ "$waited" -ge "$limit" ]; then
			echo "test.sh: gave up after ${waited}s waiting for the apt/dpkg lock (MRC_APT_LOCK_WAIT=$limit):" >&2
			cat "$err" >&2
			rm -f "$err"
			return "$rc"
		fi
		if [ "$waited" = 0 ]; then
			echo "test.sh: the apt/dpkg lock is held by another process; waiting up to ${limit}s (MRC_APT_LOCK_WAIT):" >&2
			sed -n '1p' "$err" >&2
		fi
		sleep "$step"
		waited=$((waited + step))
	done
}
