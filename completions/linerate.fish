# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_linerate_global_optspecs
    string join \n h/help V/version
end

function __fish_linerate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_linerate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_linerate_using_subcommand
    set -l cmd (__fish_linerate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c linerate -n "__fish_linerate_needs_command" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_needs_command" -s V -l version -d 'Print version'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "serve" -d 'Answer every kind of session on one TCP port'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "bench" -d 'Memory-to-memory throughput, one thread per stream, with TCP_INFO and a verdict'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "latency" -d 'Round-trip percentiles and bandwidth against message size, idle and under load'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "incast" -d 'Many senders on many hosts to one receiver, swept over senders x hosts x message size'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "mesh" -d 'Every ordered pair of a host list, pair by pair or all at once; the slowest named'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "job" -d 'Proxy applications across many hosts: a 3D halo exchange, an all-to-all'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "agent" -d 'Join a many-host run as one host\'s agent (what incast\'s and mesh\'s launchers start)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "send" -d 'Send files, trees or generated data to `recv` or `serve --root`, in parallel, resumable'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "recv" -d 'Receive one transfer into a directory; prints the URL to send to'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "keys" -d 'This user\'s client key for daemons (`serve --root`): make it, print it'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "demo" -d 'Run the whole tool on loopback with generated data: no root, no setup'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "lab" -d 'Namespace testbeds with WAN conditions (netem, or the built-in emulator)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "study" -d 'The seed papers\' studies on a lab, one command each (root)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "compare" -d 'linerate and the installed peers (iperf2, iperf3, nuttcp; rsync for files) side by side'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "report" -d 'Result documents to one self-contained HTML page of figures (and CSV)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "history" -d 'What ran between which hosts: each series\' latest result against its normal range'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "archive" -d 'Results in and out of the archive: import older ones and iperf3\'s, export all'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "schedule" -d 'Run tests on a schedule (bench, latency, mesh, send), one throughput test a path at once'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "dashboard" -d 'Serve the archive read-only: a grid of paths, each series over time, regressions, /metrics'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "tune" -d 'Audit host settings, plan them from a target rate and RTT, apply and revert'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "man" -d 'Write the manual pages (linerate.1 and one per subcommand)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell)'
complete -c linerate -n "__fish_linerate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l bind -d 'Local address to listen on ([::] also accepts IPv4)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -s p -l port -d 'TCP port for control and data of every session' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l root -d 'Accept transfers (`linerate send SRC HOST:/DEST`) into DEST under this directory' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l identity -d 'This server\'s identity (certificate and key, PEM), made on first start; its fingerprint is printed at every start, for clients to pin. Default: server.pem in linerate\'s config directory' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l authorized-keys -d 'The client keys --root takes transfers from: one fingerprint per line (`linerate keys list` prints a user\'s), then a comment; read again at every connection. Default: authorized_keys in linerate\'s config directory' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l session-memory -d 'Memory one transfer\'s manifest and bookkeeping may take, charged at about 430 bytes an entry plus its path: the default holds about 4 million entries with 100-byte paths' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-entries -d 'Entries (files, directories, links) one transfer may announce' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l partial-ttl -d 'How long what a cut-short transfer left under --root (partial files, journals, new directories) waits for a rerun to resume it before it is removed (with ms/s/m/h)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-sessions -d 'Transfers served at once, from senders that proved a key or token (strangers\' sessions draw on --max-open-sessions instead, and can never take these)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-open-sessions -d 'Sessions of clients without a key at once, all sources together; when full, the source holding the most gives up its oldest' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-open-sessions-per-source -d 'Sessions of clients without a key at once from one source (an IPv4 address, an IPv6 prefix: --ipv6-prefix)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-bench-time -d 'The longest bench a client without a key may run (with ms/s/m/h); a session that moves under 64 KiB in 10 s is ended too' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l ipv6-prefix -d 'IPv6 sources are counted by this prefix length (one host usually holds a /64)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l max-streams -d 'Data connections of all sessions at once' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l frame-memory -d 'Memory for control messages still arriving, all sessions together' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l bench-memory -d 'Memory for the buffers of every bench and latency session at once: each is charged its write length (senders share one pattern) plus its read length per receiving stream; past it, new ones are refused as busy. The daemon\'s resident size stays near this plus 64 MiB' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l pidfile -d 'Write the process id to FILE, and remove it when the process stops' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l logfile -d 'Append the log to FILE instead of standard error' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l schedule -d 'Also follow this schedule file, as `linerate schedule run FILE` does: one daemon answers the other ends\' tests and runs its own' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l log-level -d 'Least level of the lines logged: error, warn, info, debug or trace. Default: info (warn for `agent`)' -r
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l log-format -d 'Log lines as text, or as one JSON object a line (for collectors)' -r -f -a "text\t'`TIME LEVEL span{fields}: message`'
json\t'`{"timestamp":..,"level":..,"message":..,"span":{..}}`'"
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l once -d 'Exit after the first session ends'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l acls-as-sent -d 'Apply the ACLs senders send with -A as sent. Off, every ACL entry (and a directory\'s default ACL) is held within this daemon\'s umask, as modes are: no sender makes a file under --root writable by others. For a daemon whose senders all may decide who reads and writes what they send (docs/security.md#acls)'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l no-encrypt -d 'Take transfers in the clear and from anyone who can reach the port: only on a network you trust'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -l keep-special-bits -d 'Apply setuid, setgid and sticky bits as senders send them. Off, they are dropped and the umask applies. Only for trusted senders: as root, a sender could otherwise plant a setuid-root program'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -s D -l daemon -d 'Go into the background once started (the command returns at once)'
complete -c linerate -n "__fish_linerate_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s p -l port -d 'Server port, as iperf\'s -p (or give HOST:PORT)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s P -l streams -d 'Parallel streams, one thread and one socket each' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s t -l time -d 'Run length (seconds, or with ms/s/m/h) [default: 10; with --find-rate, each probe\'s: 2]' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s n -l bytes -d 'Send this many bytes in total (e.g. 10G) instead of running for a time' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s l -l len -d 'Bytes per write call. Default: 1M when every stream thread has a core, else 128K' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l read-len -d 'Bytes per read call at the receiver. Default: 1M when every stream thread has a core and receivers block, else 128K' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s i -l interval -d 'Seconds between interval reports (0: none)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l omit -d 'Leave out the first seconds (slow start) from the summary' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l fq-rate -d 'Pacing cap per stream (SO_MAX_PACING_RATE), in bits/s, e.g. 9G' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s b -l bitrate -d 'Total rate cap of each direction, bits/s (e.g. 2G), split evenly over its streams, each paced (SO_MAX_PACING_RATE). iperf3\'s -b caps each stream instead' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l capacity -d 'The path\'s capacity where you know it (e.g. 10G, a NIC\'s or a circuit\'s rate): the verdict gives the run\'s share of it, and a run at 90 % of it or more is a full path. Default: a lab\'s --rate when run in one of its hosts (`lab exec`)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s M -l mss -d 'TCP maximum segment size (TCP_MAXSEG)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l notsent-lowat -d 'Bytes a sending socket may hold not yet sent before its writer waits (TCP_NOTSENT_LOWAT), at both ends\' senders. Default: the kernel\'s (no limit)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s B -l bind -d 'Local address to connect from; with --stripe, one per path (comma-separated, in --stripe\'s order) or one for all' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l stripe -d 'Spread the data streams round-robin over these receiver addresses (comma-separated, e.g. one per NIC or per link), each paired with the -B address at its place; the control connection goes to the target. N paths need at least N streams (-P is raised to N where lower)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l server-fingerprint -d 'The fingerprint of the server\'s certificate (`linerate serve` logs it)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l probes -d 'With --find-rate: at most this many probes; the search also ends once the passing and failing rates are within 2 %' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l payload -d 'What the senders send: random bytes, which no layer can compress, or zeros, to see what a compressing path (a WAN optimiser, a tunnel with compression) carries at its best' -r -f -a "random\t''
zeros\t''"
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l rcvlowat -d 'Wake receivers only once this many bytes are queued (SO_RCVLOWAT; 1 wakes them for any data). Default: 128K between namespaces of one host, else off (see docs/defaults.md)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l threads -d 'Threads each end runs its TCP streams on: with fewer threads than streams, each thread runs one epoll loop for its share of the senders or of the receivers. Default: a thread a stream, which measured faster (see docs/defaults.md#stream-threads). Not for --udp, --encrypt or --zerocopy, whose streams always have a thread each' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l affinity -d 'Where stream threads run (CPU affinity at both ends)' -r -f -a "auto\t'Pin only where it measured faster: polling receivers on one host get a core per thread at up to one thread per core, a core per stream at up to four'
off\t''
spread\t'One core per stream thread: client stream i on the 2i-th usable CPU, server on the next'
pairs\t'Both ends of stream i on the i-th usable CPU (both ends on one host)'"
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l rx-poll -d 'Receivers poll before blocking; auto polls on loopback at up to four stream threads per core, between namespaces of one host while threads share cores' -r -f -a "auto\t'Poll on loopback while there are at most four stream threads per core; between namespaces of one host only while threads share cores'
on\t''
off\t''"
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s R -l reverse -d 'Server sends, client receives'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l bidir -d 'Both directions at once (-P streams each way)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s N -l no-delay -d 'TCP_NODELAY on every stream at both ends: each write leaves at once instead of waiting to fill a segment (iperf3\'s -N). Default: Nagle on, as for any bulk sender'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s 4 -d 'Use IPv4 only'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s 6 -d 'Use IPv6 only'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l zerocopy -d 'Send with MSG_ZEROCOPY (pays off on real NICs with large writes; loopback copies anyway)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l encrypt -d 'Encrypt every stream (TLS 1.3, as transfers do), to measure what encryption costs; the summary and the result name the cipher. The server is trusted as `send` trusts a daemon (--server-fingerprint, or known_servers, recorded at the first contact)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s u -l udp -d 'UDP instead of TCP: datagrams of -l bytes (default 1472) at -b bits/s (default 1G, all streams of a direction together), each numbered and timed; the receiver counts loss, reordering, duplicates and jitter (RFC 3550) per interval'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l no-gso -d 'With --udp: one datagram per send, not many (UDP_SEGMENT, GSO)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l no-gro -d 'With --udp: one datagram per receive, not coalesced runs (UDP_GRO)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l find-rate -d 'With --udp: search for the highest rate with no datagram lost (and 95 % of the asked rate arriving), from 1 Mbit/s up to -b (default 400G), in probes of -t (default 2 s)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l skip-rx-copy -d 'Receiver discards data in the kernel (MSG_TRUNC) instead of copying it out'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -l json-stream -d 'Print one JSON line per interval on stdout, then the linerate.result/1 document as the last line (human output goes to stderr)'
complete -c linerate -n "__fish_linerate_using_subcommand bench" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s p -l port -d 'Server port (or give HOST:PORT)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s P -l connections -d 'Connections, each its own ping-pong, all at once' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l sizes -d 'Request sizes: one (64), a list (1,64,4K) or a sweep of powers of two (1..4M). Default: 1 byte; with --bandwidth, 1..4M; with --udp, 14 bytes (sockperf\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l reply-size -d 'Reply size. Default: the request\'s size (a ping-pong); 1 byte with --bandwidth' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l window-messages -d 'Requests outstanding in each window of --bandwidth. Default: 64 (osu_bw\'s), or as many as make 64 KiB for small messages' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s t -l time -d 'How long each size runs at most. Default: 5 s for one size, 1 s a size in a sweep' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l iterations -d 'Most measured rounds of each size per connection. Default: none for one size (it runs for -t); in a sweep osu\'s 10,000 (1,000 above 8 KiB; 100 and 20 with --bandwidth)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l warmup -d 'Rounds left out before each size is measured. Default: osu\'s 1,000 (100 above 8 KiB; 10 and 2 with --bandwidth), within a tenth of -t' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l busy-poll -d 'Both ends spin on non-blocking receives (and set SO_BUSY_POLL) instead of sleeping in them: lower latency for a core kept busy at each end. auto spins where every spinning thread finds an idle core and no --load needs them, and each end blocks from the moment it waits for its core (the result says which)' -r -f -a "auto\t''
on\t''
off\t''"
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l load -d 'Measure each size idle, then again beside N bulk streams to the same server (latency under load: the queue they build)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l timeout -d 'Give up when the server sends no reply for this long' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s B -l bind -d 'Local address to connect from; with --stripe, one per path (comma-separated, in --stripe\'s order) or one for all' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l bandwidth -d 'Bandwidth against message size (osu_bw style): windows of --window-messages requests back to back, one reply per window'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s u -l udp -d 'The ping-pong over UDP: each request and reply one datagram of 12 B (its header: a sequence number and the reply\'s size) to 65,507 B. A reply that takes 4x the slowest round trip so far (at least 20 ms) counts as lost, not timed'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s 4 -d 'Use IPv4 only'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s 6 -d 'Use IPv6 only'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand latency" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l hosts -d 'Start one agent on each host over ssh, in rank order (h1,h2,...), with the user\'s ssh config and keys' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l ssh -d 'The ssh command, with any options, that reaches each of --hosts' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l remote-path -d 'linerate\'s path on the --hosts, when it is not on their PATH' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l lab -d 'Run one agent in each host namespace of this lab (h1 is rank 0)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l lab-hosts -d 'Only these hosts of the --lab, in rank order (an allocation: h3,h6,h1)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l local -d 'Run N agents as processes on this host\'s loopback (a scale test)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l coordinator -d 'Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0\'s host (required); under srun, default the job\'s first host; with --hosts, default this host\'s address towards the first of them' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s t -l time -d 'Length of each step' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s i -l interval -d 'Between interval samples of each flow' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l timeout -d 'Give up the whole run after this long (default: the plan\'s length, with room for joining and reporting)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l receiver -d 'The rank that receives; every other rank sends' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l senders -d 'Sending processes on each source host (one flow of one stream each), swept' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l source-hosts -d 'Source hosts, swept (default: all of them)' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l sizes -d 'Message sizes (bytes per write), swept: the seed\'s 8 B, 10 KB and 1 MB by default' -r
complete -c linerate -n "__fish_linerate_using_subcommand incast" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand incast" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l hosts -d 'Start one agent on each host over ssh, in rank order (h1,h2,...), with the user\'s ssh config and keys' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l ssh -d 'The ssh command, with any options, that reaches each of --hosts' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l remote-path -d 'linerate\'s path on the --hosts, when it is not on their PATH' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l lab -d 'Run one agent in each host namespace of this lab (h1 is rank 0)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l lab-hosts -d 'Only these hosts of the --lab, in rank order (an allocation: h3,h6,h1)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l local -d 'Run N agents as processes on this host\'s loopback (a scale test)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l coordinator -d 'Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0\'s host (required); under srun, default the job\'s first host; with --hosts, default this host\'s address towards the first of them' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s t -l time -d 'Length of each step' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s i -l interval -d 'Between interval samples of each flow' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l timeout -d 'Give up the whole run after this long (default: the plan\'s length, with room for joining and reporting)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s P -l streams -d 'Streams of each pair\'s flow' -r
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -l all-at-once -d 'Every pair at once instead of one pair at a time'
complete -c linerate -n "__fish_linerate_using_subcommand mesh" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand job; and not __fish_seen_subcommand_from halo3d all-to-all help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand job; and not __fish_seen_subcommand_from halo3d all-to-all help" -f -a "halo3d" -d 'Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember\'s halo3d-26)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and not __fish_seen_subcommand_from halo3d all-to-all help" -f -a "all-to-all" -d 'Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and not __fish_seen_subcommand_from halo3d all-to-all help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l hosts -d 'Start one agent on each host over ssh, in rank order (h1,h2,...), with the user\'s ssh config and keys' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l ssh -d 'The ssh command, with any options, that reaches each of --hosts' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l remote-path -d 'linerate\'s path on the --hosts, when it is not on their PATH' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l lab -d 'Run one agent in each host namespace of this lab (h1 is rank 0)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l lab-hosts -d 'Only these hosts of the --lab, in rank order (an allocation: h3,h6,h1)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l local -d 'Run N agents as processes on this host\'s loopback (a scale test)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l coordinator -d 'Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0\'s host (required); under srun, default the job\'s first host; with --hosts, default this host\'s address towards the first of them' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -s n -l iterations -d 'Iterations every rank runs' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l compute -d 'Compute time per iteration before its exchange (slept, not spun: the ranks share the lab\'s cores with its network)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l limit -d 'The job\'s time limit: ranks stop there and report what they completed' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l timeout -d 'Give up the whole run after this long (default: the limit, with room for joining and reporting)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l cells -d 'Cells each rank holds along x, y and z (one number for a cube)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l values -d 'Doubles per cell: a face carries cells x cells x values x 8 bytes' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from halo3d" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l hosts -d 'Start one agent on each host over ssh, in rank order (h1,h2,...), with the user\'s ssh config and keys' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l ssh -d 'The ssh command, with any options, that reaches each of --hosts' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l remote-path -d 'linerate\'s path on the --hosts, when it is not on their PATH' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l lab -d 'Run one agent in each host namespace of this lab (h1 is rank 0)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l lab-hosts -d 'Only these hosts of the --lab, in rank order (an allocation: h3,h6,h1)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l local -d 'Run N agents as processes on this host\'s loopback (a scale test)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l coordinator -d 'Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0\'s host (required); under srun, default the job\'s first host; with --hosts, default this host\'s address towards the first of them' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -s n -l iterations -d 'Iterations every rank runs' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l compute -d 'Compute time per iteration before its exchange (slept, not spun: the ranks share the lab\'s cores with its network)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l limit -d 'The job\'s time limit: ranks stop there and report what they completed' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l timeout -d 'Give up the whole run after this long (default: the limit, with room for joining and reporting)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -s Z -l cc -d 'Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout; human output then goes to stderr)' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l message -d 'Bytes each rank sends every other rank per iteration' -r
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from all-to-all" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "halo3d" -d 'Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember\'s halo3d-26)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "all-to-all" -d 'Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)'
complete -c linerate -n "__fish_linerate_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l coordinator -d 'The coordinator to join: HOST[:PORT] (port 5301 by default)' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l rank -d 'This agent\'s rank' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l size -d 'Ranks in the run' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l name -d 'The name the result gives this host (default: its host name)' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l listen -d 'Where this agent\'s bench server listens for its peers\' flows' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l timeout -d 'Leave when the coordinator is silent this long, or unreachable' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l log-level -d 'Least level of the lines logged: error, warn, info, debug or trace. Default: info (warn for `agent`)' -r
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l log-format -d 'Log lines as text, or as one JSON object a line (for collectors)' -r -f -a "text\t'`TIME LEVEL span{fields}: message`'
json\t'`{"timestamp":..,"level":..,"message":..,"span":{..}}`'"
complete -c linerate -n "__fish_linerate_using_subcommand agent" -l token-stdin -d 'Read the run\'s token from the first line of stdin (how ssh launches pass it); otherwise it comes from LINERATE_RUN_TOKEN, if set'
complete -c linerate -n "__fish_linerate_using_subcommand agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l url-file -d 'Read the target URL from this file (its first line) instead of the command line, so its secret stays out of `ps` and shell history' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand send" -l from-memory -d 'Send SIZE bytes generated in memory instead of files (no source disk)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -s P -l streams -d 'Parallel streams, one thread and one socket each' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l block -d 'Block size: the unit of scheduling, checksums and resume' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l server-fingerprint -d 'The fingerprint of the daemon\'s certificate (`linerate serve --root` prints it at start). Without it, the one recorded in known_servers at the first contact is required, and a first contact records the one it sees, as ssh does' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l exclude -d 'Leave out source paths matching PATTERN, by rsync\'s rules (a leading / anchors at the sources\' names, a trailing / matches directories only, * stops at /, ** does not, dir/*** is a directory and all in it). Repeatable; with --include and --exclude-from, the first rule that matches a path decides, in the order given' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l include -d 'Send source paths matching PATTERN even where a later --exclude matches them (rsync\'s rules, as --exclude)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l exclude-from -d 'Read exclude patterns from FILE, one per line, as rsync does: blank lines and lines starting with ; or # skipped, "+ PATTERN" includes, "- PATTERN" excludes' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand send" -l rate -d 'Cap the whole transfer, in bits/s (e.g. 5G), paced per socket' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -s w -l window -d 'Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l sndbuf -d 'Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -s S -l tos -d 'IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l dscp -d 'DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper six bits of the TOS byte, its two ECN bits left to the kernel' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -s B -l bind -d 'Local address to connect from; with --stripe, one per path (comma-separated, in --stripe\'s order) or one for all' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l stripe -d 'Spread the data streams round-robin over these receiver addresses (comma-separated, e.g. one per NIC or per link), each paired with the -B address at its place; the control connection goes to the target. N paths need at least N streams (-P is raised to N where lower)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l rx-poll -d 'Receivers poll before blocking (auto: off; polling measured slower when the receiver writes)' -r -f -a "auto\t'Poll on loopback while there are at most four stream threads per core; between namespaces of one host only while threads share cores'
on\t''
off\t''"
complete -c linerate -n "__fish_linerate_using_subcommand send" -l json -d 'Write the linerate.result/1 document to FILE (\'-\' for stdout)' -r
complete -c linerate -n "__fish_linerate_using_subcommand send" -l skip-writes -d 'The receiver checks and discards: measures the network and CPUs only'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l no-replace -d 'Refuse the transfer when a file exists at the destination and differs from the source. By default such a file is replaced, at once (the new one is renamed over it when complete), as rsync does'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l ignore-existing -d 'Leave files that exist at the destination as they are, even where they differ (rsync\'s --ignore-existing)'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s u -l update -d 'Leave files that are newer at the destination than at the source (rsync\'s -u, --update); replace the others that differ'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l delete -d 'Delete what the destination\'s copies of the source directories hold and the sources lack, once the transfer is complete (rsync\'s --delete, done after the transfer). Only inside the destination; paths the --exclude rules leave out are kept. Try it with --dry-run first'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l force -d 'Replace a non-empty directory at the destination where the source now has a file or a link (rsync\'s --force; --delete does it too). Without either such a run stops and names the directory; an empty one is always replaced'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s n -l dry-run -d 'Change nothing at the receiver: list what would be created, replaced and deleted, and send no data'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s i -l itemize -d 'List every path created, replaced or deleted, in rsync -i\'s letters (`>f.st...... path`; docs/guide.md#itemize)'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s X -l xattrs -d 'Send extended attributes (the user. namespace; as root also trusted. and security., which a receiver applies only with --keep-special-bits), as rsync\'s -X'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s A -l acls -d 'Send POSIX ACLs (access and default), as rsync\'s -A'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l numeric-ids -d 'Give owners and groups by the numbers sent, not by their names. A receiver keeps owners only when it runs as root, as rsync does'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l overwrite -d 'Replace files that differ: the default now; kept for older scripts'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l verify -d 'Compare a whole-file BLAKE3 of source and destination at the end'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s c -l checksum -d 'Decide by contents which files differ, as rsync\'s -c does: the sender reads every file for its BLAKE3, the receiver reads each file it holds of the same size and compares; files of the same contents are kept (their time set to the source\'s) whatever their times say, and files whose size and time match but whose contents differ are sent. Costs a read of both trees'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l no-block-checksum -d 'Send blocks without their XXH3 checksum: only TCP\'s own checksum (and --verify, if given) guards the data. Saves both ends one pass over every byte where the CPU is the limit'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l no-fsync -d 'Do not sync: the receiver normally syncs each file\'s data before it journals its blocks as done and before it renames the file into place, and each directory before it reports the transfer complete, so a crash after "complete" loses nothing. For scratch data'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l no-encrypt -d 'Send in the clear, to a receiver started with --no-encrypt (its URL has no fp=). By default everything after each connection\'s greeting is encrypted (TLS 1.3, AES-128-GCM where the CPU has AES instructions) and the receiver must hold the certificate the URL names'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l follow-links -d 'Follow symbolic links instead of recreating them'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l direct -d 'Bypass the page cache at both ends (O_DIRECT), for cold disk-to-disk runs: the sender reads and the receiver writes whole pages of every file above 1 MiB directly. Smaller files and a file\'s last partial page go through the cache, as does everything on a file system that refuses O_DIRECT (the summary says how much went direct). --block must then be a multiple of 4 KiB'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l evict -d 'Drop each block from the page cache once it is sent and once it is written (flushed to disk first), so a transfer larger than memory does not push the host\'s other data out of the cache'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s 4 -d 'Use IPv4 only'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s 6 -d 'Use IPv6 only'
complete -c linerate -n "__fish_linerate_using_subcommand send" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s q -l quiet -d 'Print no progress'
complete -c linerate -n "__fish_linerate_using_subcommand send" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l bind -d 'Local address to listen on' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -s p -l port -d 'Port to listen on (0: any free port)' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l advertise -d 'Host name the URL gives the sender. Default: the bind address if it is a specific one, else this host\'s name' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l stripe -d 'This host\'s addresses to offer for striping (comma-separated, e.g. one per NIC): the URL lists them, and the sender spreads its streams over them, paired with its -B list, unless it gives its own --stripe' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l log -d 'Log file of a receiver in the background' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l wait -d 'Give up when no sender has connected this long after the URL was printed, or when a transfer cut short (the sender\'s Ctrl-C, a lost connection) has not been resumed this long after (s, or with ms/s/m/h; 0: wait for ever for the first, not at all after a cut). Until then the sender\'s "rerun the same command" resumes it. A receiver in the background whose sender never came would otherwise hold its port for ever' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l session-memory -d 'Memory one transfer\'s manifest and bookkeeping may take, charged at about 430 bytes an entry plus its path: the default holds about 4 million entries with 100-byte paths' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l max-entries -d 'Entries (files, directories, links) one transfer may announce' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l log-level -d 'Least level of the lines logged: error, warn, info, debug or trace. Default: info (warn for `agent`)' -r
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l log-format -d 'Log lines as text, or as one JSON object a line (for collectors)' -r -f -a "text\t'`TIME LEVEL span{fields}: message`'
json\t'`{"timestamp":..,"level":..,"message":..,"span":{..}}`'"
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l foreground -d 'Stay in the foreground after printing the URL. By default, when stdout is not a terminal (as in `ssh host linerate recv DIR | linerate send SRC -`), the receiver moves to the background so the command substitution returns'
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l no-encrypt -d 'Take the transfer in the clear: the URL then has no fp= and the sender must pass --no-encrypt too. By default the receiver makes a certificate for this session, puts its fingerprint in the URL, and refuses senders that do not encrypt'
complete -c linerate -n "__fish_linerate_using_subcommand recv" -l keep-special-bits -d 'Apply setuid, setgid and sticky bits as senders send them. Off, they are dropped and the umask applies. Only for trusted senders: as root, a sender could otherwise plant a setuid-root program'
complete -c linerate -n "__fish_linerate_using_subcommand recv" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and not __fish_seen_subcommand_from new list help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and not __fish_seen_subcommand_from new list help" -f -a "new" -d 'Make this user\'s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon\'s --authorized-keys file'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and not __fish_seen_subcommand_from new list help" -f -a "list" -d 'Print this user\'s client key fingerprint, as a line for a daemon\'s --authorized-keys file, and the daemons this user has met'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and not __fish_seen_subcommand_from new list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from new" -l force -d 'Replace an existing key (daemons that list the old one refuse this user until they list the new one)'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from new" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "new" -d 'Make this user\'s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon\'s --authorized-keys file'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "list" -d 'Print this user\'s client key fingerprint, as a line for a daemon\'s --authorized-keys file, and the daemons this user has met'
complete -c linerate -n "__fish_linerate_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand demo" -l out -d 'Folder for the result documents and the report' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand demo" -l seconds -d 'Seconds per bench run' -r
complete -c linerate -n "__fish_linerate_using_subcommand demo" -l lab -d 'Also run short WAN and tuning studies through a lab (root)'
complete -c linerate -n "__fish_linerate_using_subcommand demo" -l no-compare -d 'Skip the side-by-side run of the installed peers'
complete -c linerate -n "__fish_linerate_using_subcommand demo" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "up" -d 'Create namespaces, links, addresses and routes, and set the conditions'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "set" -d 'Change the conditions of a running lab'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "status" -d 'Topology, backend, conditions and live emulator counters'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "exec" -d 'Run a command inside a lab host (h1, h2, ...) or the router (r)'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "addr" -d 'Print a host\'s address, for scripts: `linerate bench $(linerate lab addr h2)`'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "down" -d 'Remove everything a lab created; safe to repeat and after a crash'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and not __fish_seen_subcommand_from up set status exec addr down help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l name -d 'Lab name' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l hosts -d 'Host namespaces (h1, h2, ...); 2 unless a --topology says otherwise' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l mtu -d 'MTU of every lab link' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l backend -d 'What makes the conditions' -r -f -a "auto\t'netem when the kernel has it, else the built-in emulator'
netem\t''
emulator\t''
veth\t'Plain veth (and TBF for --rate): no delay or loss'
htb\t'A --topology\'s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)'"
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l links -d 'Parallel links per host, to its peer or to the router, each with the conditions given here and its own addresses (see `lab status`); `lab set --link N` changes one' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l bond -d 'Join each host\'s links into one bond that hashes every flow to one link (lacp: layer 3+4, as an 802.3ad bond with xmit_hash_policy=layer3+4); the host\'s address is then the bond\'s' -r -f -a "lacp\t'A flow stays on one member, chosen by a hash of its addresses and ports'"
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l rtt -d 'Round-trip time added by the link (e.g. 44ms); half each way' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l jitter -d 'Delay variation each way, plus or minus (packets keep their order)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l loss -d 'Packet loss (e.g. 0.1%)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l loss-burst -d 'Mean length of loss bursts in packets (Gilbert-Elliott); 1 = independent' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l reorder -d 'Packets reordered, e.g. 0.02%: each overtakes the few packets queued just before it (--reorder-depth), as on a path with parallel lanes' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l reorder-model -d 'How a reordered packet overtakes others. displace (default): it crosses the link\'s rate and delay as every packet does and leaves ahead of the last --reorder-depth packets. netem: it skips the delay line and leaves at once, as netem\'s reorder does; on a long delay its round trip is near zero, which bbr takes for the path\'s and throttles itself to (the verdict calls such a run invalid)' -r -f -a "displace\t'Ahead of the last few packets queued (--reorder-depth)'
netem\t'Past the whole delay line, at once (netem\'s reorder)'"
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l reorder-depth -d 'Packets a reordered one overtakes with --reorder-model displace (default 3)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l duplicate -d 'Packets delivered twice' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l rate -d 'Bottleneck rate (e.g. 10gbit, 1G); `none` removes it' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l queue -d 'Bottleneck queue in bytes (default: one RTT of the rate, at least 10 ms)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l seed -d 'Seed of the random decisions (same seed, same fates)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l topology -d 'Join the hosts through switches whose ports have per-class queues, ETS or strict priority, ECN marking and PFC pause (made by the emulator)' -r -f -a "star\t'Every host on one switch'
dumbbell\t'Two switches joined by one link (the taper sets its rate), half the hosts on each'
leaf-spine\t'Hosts on leaves, every leaf joined to every spine (ECMP by flow hash)'"
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l leaves -d 'Leaf switches of a leaf-spine fabric' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l spines -d 'Spine switches of a leaf-spine fabric' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l hosts-per-leaf -d 'Hosts on each leaf of a leaf-spine fabric' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l taper -d 'Oversubscription DOWN:UP: 4:1 gives a leaf\'s uplinks (or a dumbbell\'s middle link) a quarter of its hosts\' rate together' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l class -d 'A traffic class of every port, repeated: NAME:dscp=LIST:strict or NAME:dscp=LIST:ets=WEIGHT, optionally :lossless (PFC). dscp=* takes the code points no other class names. Default: one best-effort class' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l ecn-threshold -d 'Mark ECN-capable packets CE when their class\'s queue holds more than this (hosts then negotiate ECN: net.ipv4.tcp_ecn=1)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l pfc-xoff -d 'Bytes a switch holds from one upstream port in a lossless class before pausing it (XON is half). Default 64K' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l hop-delay -d 'Propagation delay of every fabric link (e.g. 5us)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l router -d 'Route between hosts through a router namespace (kernel forwarding on veth and netem; the emulator always has one)'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -l dry-run -d 'Print the ip/tc commands instead of running them'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l name -d 'Lab name' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l link -d 'Change only this link of a lab with --links (1 to N)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l host -d 'Change only the router\'s link into this host (h1, h2, ...) of a lab with --router on kernel links (--backend veth or netem): what reaches the host crosses it' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l rtt -d 'Round-trip time added by the link (e.g. 44ms); half each way' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l jitter -d 'Delay variation each way, plus or minus (packets keep their order)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l loss -d 'Packet loss (e.g. 0.1%)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l loss-burst -d 'Mean length of loss bursts in packets (Gilbert-Elliott); 1 = independent' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l reorder -d 'Packets reordered, e.g. 0.02%: each overtakes the few packets queued just before it (--reorder-depth), as on a path with parallel lanes' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l reorder-model -d 'How a reordered packet overtakes others. displace (default): it crosses the link\'s rate and delay as every packet does and leaves ahead of the last --reorder-depth packets. netem: it skips the delay line and leaves at once, as netem\'s reorder does; on a long delay its round trip is near zero, which bbr takes for the path\'s and throttles itself to (the verdict calls such a run invalid)' -r -f -a "displace\t'Ahead of the last few packets queued (--reorder-depth)'
netem\t'Past the whole delay line, at once (netem\'s reorder)'"
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l reorder-depth -d 'Packets a reordered one overtakes with --reorder-model displace (default 3)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l duplicate -d 'Packets delivered twice' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l rate -d 'Bottleneck rate (e.g. 10gbit, 1G); `none` removes it' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l queue -d 'Bottleneck queue in bytes (default: one RTT of the rate, at least 10 ms)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -l seed -d 'Seed of the random decisions (same seed, same fates)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from status" -l name -d 'One lab (default: all)' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from status" -l json -d 'Print JSON'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from exec" -l name -d 'Lab name' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from exec" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from addr" -l name -d 'Lab name' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from addr" -l link -d 'The address on this one of the host\'s parallel links (--links), instead of its first link\'s or its bond\'s' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from addr" -s 6 -d 'The IPv6 address instead'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from addr" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from down" -l name -d 'Lab name' -r
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "up" -d 'Create namespaces, links, addresses and routes, and set the conditions'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "set" -d 'Change the conditions of a running lab'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "status" -d 'Topology, backend, conditions and live emulator counters'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "exec" -d 'Run a command inside a lab host (h1, h2, ...) or the router (r)'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "addr" -d 'Print a host\'s address, for scripts: `linerate bench $(linerate lab addr h2)`'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "down" -d 'Remove everything a lab created; safe to repeat and after a crash'
complete -c linerate -n "__fish_linerate_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "wan" -d 'Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "lan" -d 'Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "tuning" -d 'One stream on a lab WAN before and after `tune plan`\'s settings (applied, then reverted)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "interference" -d 'A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "striping" -d 'N parallel links between two hosts: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and not __fish_seen_subcommand_from wan lan tuning interference striping help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l json -d 'Where to write the linerate.result/1 document' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -s t -l time -d 'Seconds per bench run (default 5, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l cc -d 'Congestion control for every run (default: the host\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l name -d 'Name of the lab the study builds (removed at the end)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l rtts -d 'RTTs to sweep, in ms' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l streams -d 'Stream counts to compare' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l rate -d 'Bottleneck rate of the emulated WAN; BDP-sized buffers are sized for it' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l stability-time -d 'Length of the run over time at 44 ms with reordering (default 30 s, 8 s with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l backend -d 'Backend for the WAN conditions' -r -f -a "auto\t'netem when the kernel has it, else the built-in emulator'
netem\t''
emulator\t''
veth\t'Plain veth (and TBF for --rate): no delay or loss'
htb\t'A --topology\'s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)'"
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l quick -d 'A short run of every part, for CI (about a minute)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from wan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l json -d 'Where to write the linerate.result/1 document' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -s t -l time -d 'Seconds per bench run (default 5, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l cc -d 'Congestion control for every run (default: the host\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l name -d 'Name of the lab the study builds (removed at the end)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l streams -d 'Stream counts to sweep' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l quick -d 'A short run of every part, for CI (about a minute)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from lan" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l json -d 'Where to write the linerate.result/1 document' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -s t -l time -d 'Seconds per bench run (default 5, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l cc -d 'Congestion control for every run (default: the host\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l name -d 'Name of the lab the study builds (removed at the end)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l rtt -d 'RTT of the lab WAN' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l rate -d 'Bottleneck rate of the lab WAN, and the plan\'s target' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l rounds -d 'Before/after rounds, alternating (default 3, 1 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l backend -d 'Backend for the WAN conditions' -r -f -a "auto\t'netem when the kernel has it, else the built-in emulator'
netem\t''
emulator\t''
veth\t'Plain veth (and TBF for --rate): no delay or loss'
htb\t'A --topology\'s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)'"
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l quick -d 'A short run of every part, for CI (about a minute)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from tuning" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l json -d 'Where to write the linerate.result/1 document' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -s t -l time -d 'Seconds per bench run (default 5, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l cc -d 'Congestion control for every run (default: the host\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l name -d 'Name of the lab the study builds (removed at the end)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l rate -d 'Every host link\'s rate' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l taper -d 'Oversubscription of the leaves\' uplinks' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l stagger -d 'How long the bandwidth job runs before the latency job starts (the paper\'s 10 s; 2 s with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l iterations -d 'Iterations of the latency job (default 5000, 1000 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l message -d 'Bytes the latency job sends every other rank per iteration' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l cells -d 'Cells per side of each bandwidth-job rank' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l queue -d 'Each switch port\'s buffer per class (a switch of the paper\'s kind shares 16 MB between its ports)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l seed -d 'Seed of the random disjoint allocations' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l backend -d 'The fabric\'s switches: the emulator (every configuration), or kernel switches with HTB classes (faster; no PFC, so its configuration is skipped)' -r -f -a "emulator\t'The emulator\'s switches'
htb\t'Kernel switches with HTB classes'"
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l quick -d 'A short run of every part, for CI (about a minute)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from interference" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l json -d 'Where to write the linerate.result/1 document' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -s t -l time -d 'Seconds per bench run (default 5, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l cc -d 'Congestion control for every run (default: the host\'s)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l name -d 'Name of the lab the study builds (removed at the end)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l links -d 'Parallel links between the two hosts (default 4, 2 with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l rate -d 'Each link\'s rate' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l file-size -d 'Size of the file each transfer sends (default 1G, 64M with --quick)' -r
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l quick -d 'A short run of every part, for CI (about a minute)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from striping" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "wan" -d 'Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "lan" -d 'Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "tuning" -d 'One stream on a lab WAN before and after `tune plan`\'s settings (applied, then reverted)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "interference" -d 'A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "striping" -d 'N parallel links between two hosts: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)'
complete -c linerate -n "__fish_linerate_using_subcommand study; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l tools -d 'Tools to run, in this order in the first round (default: linerate,iperf2,iperf3,nuttcp; files mode: linerate,rsync,scp,lftp,gridftp,wdt, those without an adapter reported as skipped; latency mode: linerate,sockperf,qperf,iperf2; udp mode: linerate,iperf2,iperf3)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l mode -r -f -a "mem\t'Memory to memory: linerate bench, iperf2, iperf3, nuttcp'
files\t'Files from page cache to a directory: linerate send, rsync (daemon)'
latency\t'Ping-pong round trips: linerate latency, sockperf, qperf, iperf2 --bounceback'
udp\t'UDP at one rate: linerate bench --udp, iperf2 -u, iperf3 -u'"
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l dataset -d 'Files mode: what to send' -r -f -a "large\t'One 512 MiB file'
small\t'4000 files of 4 KiB'
mixed\t'8 files of 32 MiB and 2000 of 4 KiB'"
complete -c linerate -n "__fish_linerate_using_subcommand compare" -s P -l streams -d 'Stream counts (mem mode; files mode uses the largest for linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -s t -l time -d 'Seconds per run (mem, latency and udp modes)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l size -d 'Latency mode: request and reply size in bytes (64: iperf2 --bounceback\'s client hangs below it; sockperf takes 14 and up)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -s b -l bitrate -d 'UDP mode: the rate of the one stream, bits/s (e.g. 500M, 2G)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -s l -l len -d 'UDP mode: datagram payload bytes' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l rounds -d 'Rounds; the order of the tools rotates each round' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l lab -d 'Run inside a lab: servers in h2, clients in h1 (root)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l json -d 'Where to write the linerate.result/1 document (kind compare)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l udp -d 'Latency mode: the ping-pong over UDP (linerate --udp, sockperf, qperf udp_lat)'
complete -c linerate -n "__fish_linerate_using_subcommand compare" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c linerate -n "__fish_linerate_using_subcommand report" -l archive -d 'Draw the archive\'s series over time instead: each with its normal band and the regressions named (the default archive, or this one: a path, sqlite:PATH or postgres://...)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -l since -d 'Only series with a run in this last span (30m, 12h, 7d)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -l kind -d 'Only this kind of run (bench, latency, ...)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -l from -d 'Only series whose data left this host (its name)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -l to -d 'Only series whose data reached this host (its name)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -l series -d 'One series (its id, or the start of it)' -r
complete -c linerate -n "__fish_linerate_using_subcommand report" -s o -l out -d 'The HTML page to write' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand report" -l csv -d 'Also write each figure\'s data as CSV into this folder' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand report" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand history" -l archive -d 'The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l since -d 'Only series with a run in this last span (30m, 12h, 7d)' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l kind -d 'Only this kind of run (bench, latency, ...)' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l from -d 'Only series whose data left this host (its name)' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l to -d 'Only series whose data reached this host (its name)' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l series -d 'One series (its id, or the start of it)' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -l json -d 'Write the answer as JSON to FILE (- for stdout) instead of a table' -r
complete -c linerate -n "__fish_linerate_using_subcommand history" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -f -a "import" -d 'Record result documents and iperf3 -J files, or the folders that hold them'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -f -a "export" -d 'Write recorded documents back out, one JSON document a line, oldest first'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -f -a "flush" -d 'Record the results waiting in the spool (those a run could not record)'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -f -a "acknowledge" -d 'Accept a series\' change as its new normal now (before five runs make it so)'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and not __fish_seen_subcommand_from import export flush acknowledge help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from import" -l archive -d 'The archive to record into (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from export" -l series -d 'Only this series (its id)' -r
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from export" -s o -l output -d 'Write to FILE instead of stdout' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from export" -l archive -d 'The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from flush" -l archive -d 'The archive to record into (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from flush" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from acknowledge" -l archive -d 'The archive (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from acknowledge" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from help" -f -a "import" -d 'Record result documents and iperf3 -J files, or the folders that hold them'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write recorded documents back out, one JSON document a line, oldest first'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from help" -f -a "flush" -d 'Record the results waiting in the spool (those a run could not record)'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from help" -f -a "acknowledge" -d 'Accept a series\' change as its new normal now (before five runs make it so)'
complete -c linerate -n "__fish_linerate_using_subcommand archive; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and not __fish_seen_subcommand_from run check status help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and not __fish_seen_subcommand_from run check status help" -f -a "run" -d 'Follow a schedule file: run each test at its interval, one throughput test a path at once'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and not __fish_seen_subcommand_from run check status help" -f -a "check" -d 'Read a schedule file and say what is wrong with it, line by line'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and not __fish_seen_subcommand_from run check status help" -f -a "status" -d 'Each schedule\'s tests: their next run, their last run and how it ended, their missed runs'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and not __fish_seen_subcommand_from run check status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -l archive -d 'Record the result in this archive: a path, sqlite:PATH, a site archive postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE, else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -l pidfile -d 'Write the process id to FILE, and remove it when the process stops' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -l logfile -d 'Append the log to FILE instead of standard error' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -l no-archive -d 'Record nothing (the same as --archive none)'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -s D -l daemon -d 'Go into the background once started (the command returns at once)'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from status" -l json -d 'Print the state as JSON'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from help" -f -a "run" -d 'Follow a schedule file: run each test at its interval, one throughput test a path at once'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from help" -f -a "check" -d 'Read a schedule file and say what is wrong with it, line by line'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from help" -f -a "status" -d 'Each schedule\'s tests: their next run, their last run and how it ended, their missed runs'
complete -c linerate -n "__fish_linerate_using_subcommand schedule; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -l archive -d 'The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records' -r
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -l listen -d 'Address and port to serve on' -r
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -l since -d 'Show series with a run in this last span' -r
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -l stale -d 'Grey a series whose latest run is older than this (default: three of its usual gaps, at least 1m)' -r
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -l allow-remote -d 'Serve on an address other hosts can reach (the pages name hosts and paths)'
complete -c linerate -n "__fish_linerate_using_subcommand dashboard" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "audit" -d 'Read the settings that decide TCP throughput and judge them for a target'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "plan" -d 'Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "apply" -d 'Apply a plan\'s sysctls (or a built-in profile), saving the previous values (root)'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "revert" -d 'Put back exactly what `tune apply` changed (root)'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "capture" -d 'Copy every file the audit reads into DIR, as a fixture tree'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and not __fish_seen_subcommand_from audit plan apply revert capture help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l rate -d 'Target rate (default: the fastest audited link, else 10gbit)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l rtt -d 'Round-trip time to tune for (default 100ms, ESnet\'s convention for WAN hosts)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l loss -d 'Expected packet loss (e.g. 0.02%), for the Mathis bound and the choice of bbr' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -s P -l streams -d 'Streams you will run (default: the fewest that can reach the rate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l mss -d 'Segment size (default: from the largest MTU audited)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l iface -d 'Only this interface (default: every physical one)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l root -d 'Read a fixture tree (proc/, sys/, ethtool/, tc/) instead of this host' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -l json -d 'Write a linerate.audit/1 document (`-` for stdout)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from audit" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l rate -d 'Target rate (default: the fastest audited link, else 10gbit)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l rtt -d 'Round-trip time to tune for (default 100ms, ESnet\'s convention for WAN hosts)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l loss -d 'Expected packet loss (e.g. 0.02%), for the Mathis bound and the choice of bbr' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -s P -l streams -d 'Streams you will run (default: the fewest that can reach the rate)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l mss -d 'Segment size (default: from the largest MTU audited)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l iface -d 'Only this interface (default: every physical one)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l root -d 'Read a fixture tree (proc/, sys/, ethtool/, tc/) instead of this host' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -s o -l out -d 'Write the plan (linerate.plan/1) for `tune apply --plan`' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l sysctl-out -d 'Write the sysctls as a file for /etc/sysctl.d' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l script-out -d 'Write the NIC, qdisc and CPU commands as a shell script' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l json -d 'Print the plan as JSON (`-`) or write it to FILE' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l cores -d 'Cores of the end with fewer (default: this host\'s online CPUs)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -l per-core-rate -d 'What one stream on one core carries, bits/s, as `linerate bench -P 1` measured it between the hosts (e.g. 25G). Default: measured here, one stream on loopback for 1 s (not with --root). The plan takes a stream a core up to the target, and says when the cores, not the window, bound it' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from plan" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l plan -d 'A plan written by `tune plan -o`' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l profile -d 'A built-in target, planned against this host' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l netns -d 'Work inside this network namespace (/run/netns/NAME) instead of the host' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l lab -d 'Work inside a host of this lab (with --host)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l host -d 'The lab host (h1, h2, ...)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l state -d 'State file (default: /var/lib/linerate/tune/SCOPE.json, or $LINERATE_TUNE_DIR)' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -l dry-run -d 'Show what would change, change nothing'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from apply" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from revert" -l netns -d 'Work inside this network namespace (/run/netns/NAME) instead of the host' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from revert" -l lab -d 'Work inside a host of this lab (with --host)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from revert" -l host -d 'The lab host (h1, h2, ...)' -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from revert" -l state -d 'State file (default: /var/lib/linerate/tune/SCOPE.json, or $LINERATE_TUNE_DIR)' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from revert" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from capture" -l iface -r
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from capture" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "audit" -d 'Read the settings that decide TCP throughput and judge them for a target'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "plan" -d 'Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "apply" -d 'Apply a plan\'s sysctls (or a built-in profile), saving the previous values (root)'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "revert" -d 'Put back exactly what `tune apply` changed (root)'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "capture" -d 'Copy every file the audit reads into DIR, as a fixture tree'
complete -c linerate -n "__fish_linerate_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand man" -l out -d 'Folder for linerate.1 and a page per subcommand (linerate-bench.1, ...)' -r -F
complete -c linerate -n "__fish_linerate_using_subcommand man" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand completions" -s h -l help -d 'Print help'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "serve" -d 'Answer every kind of session on one TCP port'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "bench" -d 'Memory-to-memory throughput, one thread per stream, with TCP_INFO and a verdict'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "latency" -d 'Round-trip percentiles and bandwidth against message size, idle and under load'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "incast" -d 'Many senders on many hosts to one receiver, swept over senders x hosts x message size'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "mesh" -d 'Every ordered pair of a host list, pair by pair or all at once; the slowest named'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "job" -d 'Proxy applications across many hosts: a 3D halo exchange, an all-to-all'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "agent" -d 'Join a many-host run as one host\'s agent (what incast\'s and mesh\'s launchers start)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "send" -d 'Send files, trees or generated data to `recv` or `serve --root`, in parallel, resumable'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "recv" -d 'Receive one transfer into a directory; prints the URL to send to'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "keys" -d 'This user\'s client key for daemons (`serve --root`): make it, print it'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "demo" -d 'Run the whole tool on loopback with generated data: no root, no setup'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "lab" -d 'Namespace testbeds with WAN conditions (netem, or the built-in emulator)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "study" -d 'The seed papers\' studies on a lab, one command each (root)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "compare" -d 'linerate and the installed peers (iperf2, iperf3, nuttcp; rsync for files) side by side'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "report" -d 'Result documents to one self-contained HTML page of figures (and CSV)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "history" -d 'What ran between which hosts: each series\' latest result against its normal range'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "archive" -d 'Results in and out of the archive: import older ones and iperf3\'s, export all'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "schedule" -d 'Run tests on a schedule (bench, latency, mesh, send), one throughput test a path at once'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "dashboard" -d 'Serve the archive read-only: a grid of paths, each series over time, regressions, /metrics'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "tune" -d 'Audit host settings, plan them from a target rate and RTT, apply and revert'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "man" -d 'Write the manual pages (linerate.1 and one per subcommand)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and not __fish_seen_subcommand_from serve bench latency incast mesh job agent send recv keys demo lab study compare report history archive schedule dashboard tune man completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "halo3d" -d 'Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember\'s halo3d-26)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "all-to-all" -d 'Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "new" -d 'Make this user\'s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon\'s --authorized-keys file'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "list" -d 'Print this user\'s client key fingerprint, as a line for a daemon\'s --authorized-keys file, and the daemons this user has met'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "up" -d 'Create namespaces, links, addresses and routes, and set the conditions'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "set" -d 'Change the conditions of a running lab'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "status" -d 'Topology, backend, conditions and live emulator counters'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "exec" -d 'Run a command inside a lab host (h1, h2, ...) or the router (r)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "addr" -d 'Print a host\'s address, for scripts: `linerate bench $(linerate lab addr h2)`'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "down" -d 'Remove everything a lab created; safe to repeat and after a crash'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from study" -f -a "wan" -d 'Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from study" -f -a "lan" -d 'Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from study" -f -a "tuning" -d 'One stream on a lab WAN before and after `tune plan`\'s settings (applied, then reverted)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from study" -f -a "interference" -d 'A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from study" -f -a "striping" -d 'N parallel links between two hosts: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from archive" -f -a "import" -d 'Record result documents and iperf3 -J files, or the folders that hold them'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from archive" -f -a "export" -d 'Write recorded documents back out, one JSON document a line, oldest first'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from archive" -f -a "flush" -d 'Record the results waiting in the spool (those a run could not record)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from archive" -f -a "acknowledge" -d 'Accept a series\' change as its new normal now (before five runs make it so)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from schedule" -f -a "run" -d 'Follow a schedule file: run each test at its interval, one throughput test a path at once'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from schedule" -f -a "check" -d 'Read a schedule file and say what is wrong with it, line by line'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from schedule" -f -a "status" -d 'Each schedule\'s tests: their next run, their last run and how it ended, their missed runs'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "audit" -d 'Read the settings that decide TCP throughput and judge them for a target'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "plan" -d 'Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "apply" -d 'Apply a plan\'s sysctls (or a built-in profile), saving the previous values (root)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "revert" -d 'Put back exactly what `tune apply` changed (root)'
complete -c linerate -n "__fish_linerate_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "capture" -d 'Copy every file the audit reads into DIR, as a fixture tree'
