#compdef linerate

autoload -U is-at-least

_linerate() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_linerate_commands" \
"*::: :->linerate" \
&& ret=0
    case $state in
    (linerate)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-command-$line[1]:"
        case $line[1] in
            (serve)
_arguments "${_arguments_options[@]}" : \
'--bind=[Local address to listen on (\[\:\:\] also accepts IPv4)]:BIND:_default' \
'-p+[TCP port for control and data of every session]:PORT:_default' \
'--port=[TCP port for control and data of every session]:PORT:_default' \
'--root=[Accept transfers (\`linerate send SRC HOST\:/DEST\`) into DEST under this directory]:DIR:_files' \
'--identity=[This server'\''s identity (certificate and key, PEM), made on first start; its fingerprint is printed at every start, for clients to pin. Default\: server.pem in linerate'\''s config directory]:FILE:_files' \
'--authorized-keys=[The client keys --root takes transfers from\: one fingerprint per line (\`linerate keys list\` prints a user'\''s), then a comment; read again at every connection. Default\: authorized_keys in linerate'\''s config directory]:FILE:_files' \
'--session-memory=[Memory one transfer'\''s manifest and bookkeeping may take, charged at about 430 bytes an entry plus its path\: the default holds about 4 million entries with 100-byte paths]:SIZE:_default' \
'--max-entries=[Entries (files, directories, links) one transfer may announce]:N:_default' \
'--partial-ttl=[How long what a cut-short transfer left under --root (partial files, journals, new directories) waits for a rerun to resume it before it is removed (with ms/s/m/h)]:TIME:_default' \
'--max-sessions=[Transfers served at once, from senders that proved a key or token (strangers'\'' sessions draw on --max-open-sessions instead, and can never take these)]:N:_default' \
'--max-open-sessions=[Sessions of clients without a key at once, all sources together; when full, the source holding the most gives up its oldest]:N:_default' \
'--max-open-sessions-per-source=[Sessions of clients without a key at once from one source (an IPv4 address, an IPv6 prefix\: --ipv6-prefix)]:N:_default' \
'--max-bench-time=[The longest bench a client without a key may run (with ms/s/m/h); a session that moves under 64 KiB in 10 s is ended too]:TIME:_default' \
'--ipv6-prefix=[IPv6 sources are counted by this prefix length (one host usually holds a /64)]:BITS:_default' \
'--max-streams=[Data connections of all sessions at once]:N:_default' \
'--frame-memory=[Memory for control messages still arriving, all sessions together]:SIZE:_default' \
'--bench-memory=[Memory for the buffers of every bench and latency session at once\: each is charged its write length (senders share one pattern) plus its read length per receiving stream; past it, new ones are refused as busy. The daemon'\''s resident size stays near this plus 64 MiB]:SIZE:_default' \
'--pidfile=[Write the process id to FILE, and remove it when the process stops]:FILE:_files' \
'--logfile=[Append the log to FILE instead of standard error]:FILE:_files' \
'--schedule=[Also follow this schedule file, as \`linerate schedule run FILE\` does\: one daemon answers the other ends'\'' tests and runs its own]:FILE:_files' \
'--log-level=[Least level of the lines logged\: error, warn, info, debug or trace. Default\: info (warn for \`agent\`)]:LEVEL:_default' \
'--log-format=[Log lines as text, or as one JSON object a line (for collectors)]:FORMAT:((text\:"\`TIME LEVEL span{fields}\: message\`"
json\:"\`{"timestamp"\:..,"level"\:..,"message"\:..,"span"\:{..}}\`"))' \
'--once[Exit after the first session ends]' \
'--acls-as-sent[Apply the ACLs senders send with -A as sent. Off, every ACL entry (and a directory'\''s default ACL) is held within this daemon'\''s umask, as modes are\: no sender makes a file under --root writable by others. For a daemon whose senders all may decide who reads and writes what they send (docs/security.md#acls)]' \
'--no-encrypt[Take transfers in the clear and from anyone who can reach the port\: only on a network you trust]' \
'--keep-special-bits[Apply setuid, setgid and sticky bits as senders send them. Off, they are dropped and the umask applies. Only for trusted senders\: as root, a sender could otherwise plant a setuid-root program]' \
'-D[Go into the background once started (the command returns at once)]' \
'--daemon[Go into the background once started (the command returns at once)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(bench)
_arguments "${_arguments_options[@]}" : \
'-p+[Server port, as iperf'\''s -p (or give HOST\:PORT)]:PORT:_default' \
'--port=[Server port, as iperf'\''s -p (or give HOST\:PORT)]:PORT:_default' \
'-P+[Parallel streams, one thread and one socket each]:N:_default' \
'--streams=[Parallel streams, one thread and one socket each]:N:_default' \
'-t+[Run length (seconds, or with ms/s/m/h) \[default\: 10; with --find-rate, each probe'\''s\: 2\]]:TIME:_default' \
'--time=[Run length (seconds, or with ms/s/m/h) \[default\: 10; with --find-rate, each probe'\''s\: 2\]]:TIME:_default' \
'-n+[Send this many bytes in total (e.g. 10G) instead of running for a time]:BYTES:_default' \
'--bytes=[Send this many bytes in total (e.g. 10G) instead of running for a time]:BYTES:_default' \
'-l+[Bytes per write call. Default\: 1M when every stream thread has a core, else 128K]:BYTES:_default' \
'--len=[Bytes per write call. Default\: 1M when every stream thread has a core, else 128K]:BYTES:_default' \
'--read-len=[Bytes per read call at the receiver. Default\: 1M when every stream thread has a core and receivers block, else 128K]:BYTES:_default' \
'-i+[Seconds between interval reports (0\: none)]:TIME:_default' \
'--interval=[Seconds between interval reports (0\: none)]:TIME:_default' \
'--omit=[Leave out the first seconds (slow start) from the summary]:TIME:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--fq-rate=[Pacing cap per stream (SO_MAX_PACING_RATE), in bits/s, e.g. 9G]:RATE:_default' \
'(--fq-rate)-b+[Total rate cap of each direction, bits/s (e.g. 2G), split evenly over its streams, each paced (SO_MAX_PACING_RATE). iperf3'\''s -b caps each stream instead]:RATE:_default' \
'(--fq-rate)--bitrate=[Total rate cap of each direction, bits/s (e.g. 2G), split evenly over its streams, each paced (SO_MAX_PACING_RATE). iperf3'\''s -b caps each stream instead]:RATE:_default' \
'--capacity=[The path'\''s capacity where you know it (e.g. 10G, a NIC'\''s or a circuit'\''s rate)\: the verdict gives the run'\''s share of it, and a run at 90 % of it or more is a full path. Default\: a lab'\''s --rate when run in one of its hosts (\`lab exec\`)]:RATE:_default' \
'-M+[TCP maximum segment size (TCP_MAXSEG)]:MSS:_default' \
'--mss=[TCP maximum segment size (TCP_MAXSEG)]:MSS:_default' \
'--notsent-lowat=[Bytes a sending socket may hold not yet sent before its writer waits (TCP_NOTSENT_LOWAT), at both ends'\'' senders. Default\: the kernel'\''s (no limit)]:BYTES:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'*-B+[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'*--bind=[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'*--stripe=[Spread the data streams round-robin over these receiver addresses (comma-separated, e.g. one per NIC or per link), each paired with the -B address at its place; the control connection goes to the target. N paths need at least N streams (-P is raised to N where lower)]:ADDR,...:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--server-fingerprint=[The fingerprint of the server'\''s certificate (\`linerate serve\` logs it)]:SHA256:_default' \
'--probes=[With --find-rate\: at most this many probes; the search also ends once the passing and failing rates are within 2 %]:N:_default' \
'--payload=[What the senders send\: random bytes, which no layer can compress, or zeros, to see what a compressing path (a WAN optimiser, a tunnel with compression) carries at its best]:BYTES:(random zeros)' \
'--rcvlowat=[Wake receivers only once this many bytes are queued (SO_RCVLOWAT; 1 wakes them for any data). Default\: 128K between namespaces of one host, else off (see docs/defaults.md)]:RCVLOWAT:_default' \
'(-u --udp --encrypt --zerocopy)--threads=[Threads each end runs its TCP streams on\: with fewer threads than streams, each thread runs one epoll loop for its share of the senders or of the receivers. Default\: a thread a stream, which measured faster (see docs/defaults.md#stream-threads). Not for --udp, --encrypt or --zerocopy, whose streams always have a thread each]:N:_default' \
'--affinity=[Where stream threads run (CPU affinity at both ends)]:AFFINITY:((auto\:"Pin only where it measured faster\: polling receivers on one host get a core per thread at up to one thread per core, a core per stream at up to four"
off\:""
spread\:"One core per stream thread\: client stream i on the 2i-th usable CPU, server on the next"
pairs\:"Both ends of stream i on the i-th usable CPU (both ends on one host)"))' \
'--rx-poll=[Receivers poll before blocking; auto polls on loopback at up to four stream threads per core, between namespaces of one host while threads share cores]:RX_POLL:((auto\:"Poll on loopback while there are at most four stream threads per core; between namespaces of one host only while threads share cores"
on\:""
off\:""))' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'(--bidir)-R[Server sends, client receives]' \
'(--bidir)--reverse[Server sends, client receives]' \
'--bidir[Both directions at once (-P streams each way)]' \
'-N[TCP_NODELAY on every stream at both ends\: each write leaves at once instead of waiting to fill a segment (iperf3'\''s -N). Default\: Nagle on, as for any bulk sender]' \
'--no-delay[TCP_NODELAY on every stream at both ends\: each write leaves at once instead of waiting to fill a segment (iperf3'\''s -N). Default\: Nagle on, as for any bulk sender]' \
'(-6)-4[Use IPv4 only]' \
'-6[Use IPv6 only]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'--zerocopy[Send with MSG_ZEROCOPY (pays off on real NICs with large writes; loopback copies anyway)]' \
'--encrypt[Encrypt every stream (TLS 1.3, as transfers do), to measure what encryption costs; the summary and the result name the cipher. The server is trusted as \`send\` trusts a daemon (--server-fingerprint, or known_servers, recorded at the first contact)]' \
'(--encrypt --fq-rate --zerocopy --skip-rx-copy)-u[UDP instead of TCP\: datagrams of -l bytes (default 1472) at -b bits/s (default 1G, all streams of a direction together), each numbered and timed; the receiver counts loss, reordering, duplicates and jitter (RFC 3550) per interval]' \
'(--encrypt --fq-rate --zerocopy --skip-rx-copy)--udp[UDP instead of TCP\: datagrams of -l bytes (default 1472) at -b bits/s (default 1G, all streams of a direction together), each numbered and timed; the receiver counts loss, reordering, duplicates and jitter (RFC 3550) per interval]' \
'--no-gso[With --udp\: one datagram per send, not many (UDP_SEGMENT, GSO)]' \
'--no-gro[With --udp\: one datagram per receive, not coalesced runs (UDP_GRO)]' \
'(-n --bytes --json-stream)--find-rate[With --udp\: search for the highest rate with no datagram lost (and 95 % of the asked rate arriving), from 1 Mbit/s up to -b (default 400G), in probes of -t (default 2 s)]' \
'--skip-rx-copy[Receiver discards data in the kernel (MSG_TRUNC) instead of copying it out]' \
'(--json)--json-stream[Print one JSON line per interval on stdout, then the linerate.result/1 document as the last line (human output goes to stderr)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':host -- Server to measure against\: HOST, HOST\:PORT or \[V6\]\:PORT:_default' \
&& ret=0
;;
(latency)
_arguments "${_arguments_options[@]}" : \
'-p+[Server port (or give HOST\:PORT)]:PORT:_default' \
'--port=[Server port (or give HOST\:PORT)]:PORT:_default' \
'-P+[Connections, each its own ping-pong, all at once]:N:_default' \
'--connections=[Connections, each its own ping-pong, all at once]:N:_default' \
'--sizes=[Request sizes\: one (64), a list (1,64,4K) or a sweep of powers of two (1..4M). Default\: 1 byte; with --bandwidth, 1..4M; with --udp, 14 bytes (sockperf'\''s)]:SIZES:_default' \
'--reply-size=[Reply size. Default\: the request'\''s size (a ping-pong); 1 byte with --bandwidth]:BYTES:_default' \
'--window-messages=[Requests outstanding in each window of --bandwidth. Default\: 64 (osu_bw'\''s), or as many as make 64 KiB for small messages]:N:_default' \
'-t+[How long each size runs at most. Default\: 5 s for one size, 1 s a size in a sweep]:TIME:_default' \
'--time=[How long each size runs at most. Default\: 5 s for one size, 1 s a size in a sweep]:TIME:_default' \
'--iterations=[Most measured rounds of each size per connection. Default\: none for one size (it runs for -t); in a sweep osu'\''s 10,000 (1,000 above 8 KiB; 100 and 20 with --bandwidth)]:N:_default' \
'--warmup=[Rounds left out before each size is measured. Default\: osu'\''s 1,000 (100 above 8 KiB; 10 and 2 with --bandwidth), within a tenth of -t]:N:_default' \
'--busy-poll=[Both ends spin on non-blocking receives (and set SO_BUSY_POLL) instead of sleeping in them\: lower latency for a core kept busy at each end. auto spins where every spinning thread finds an idle core and no --load needs them, and each end blocks from the moment it waits for its core (the result says which)]::WHEN:(auto on off)' \
'--load=[Measure each size idle, then again beside N bulk streams to the same server (latency under load\: the queue they build)]:N:_default' \
'--timeout=[Give up when the server sends no reply for this long]:TIME:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'*-B+[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'*--bind=[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'--bandwidth[Bandwidth against message size (osu_bw style)\: windows of --window-messages requests back to back, one reply per window]' \
'(--bandwidth --window-messages)-u[The ping-pong over UDP\: each request and reply one datagram of 12 B (its header\: a sequence number and the reply'\''s size) to 65,507 B. A reply that takes 4x the slowest round trip so far (at least 20 ms) counts as lost, not timed]' \
'(--bandwidth --window-messages)--udp[The ping-pong over UDP\: each request and reply one datagram of 12 B (its header\: a sequence number and the reply'\''s size) to 65,507 B. A reply that takes 4x the slowest round trip so far (at least 20 ms) counts as lost, not timed]' \
'(-6)-4[Use IPv4 only]' \
'-6[Use IPv6 only]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
':host -- Server to measure against\: HOST, HOST\:PORT or \[V6\]\:PORT:_default' \
&& ret=0
;;
(incast)
_arguments "${_arguments_options[@]}" : \
'(--lab --local)*--hosts=[Start one agent on each host over ssh, in rank order (h1,h2,...), with the user'\''s ssh config and keys]:HOSTS:_default' \
'--ssh=[The ssh command, with any options, that reaches each of --hosts]:CMD:_default' \
'--remote-path=[linerate'\''s path on the --hosts, when it is not on their PATH]:PATH:_default' \
'(--local)--lab=[Run one agent in each host namespace of this lab (h1 is rank 0)]:NAME:_default' \
'*--lab-hosts=[Only these hosts of the --lab, in rank order (an allocation\: h3,h6,h1)]:HOSTS:_default' \
'--local=[Run N agents as processes on this host'\''s loopback (a scale test)]:N:_default' \
'--coordinator=[Where agents reach the coordinator\: HOST or HOST\:PORT. Under mpirun, rank 0'\''s host (required); under srun, default the job'\''s first host; with --hosts, default this host'\''s address towards the first of them]:HOST[:PORT]:_default' \
'-t+[Length of each step]:TIME:_default' \
'--time=[Length of each step]:TIME:_default' \
'-i+[Between interval samples of each flow]:TIME:_default' \
'--interval=[Between interval samples of each flow]:TIME:_default' \
'--timeout=[Give up the whole run after this long (default\: the plan'\''s length, with room for joining and reporting)]:TIME:_default' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--receiver=[The rank that receives; every other rank sends]:RANK:_default' \
'--senders=[Sending processes on each source host (one flow of one stream each), swept]:LIST:_default' \
'--source-hosts=[Source hosts, swept (default\: all of them)]:LIST:_default' \
'--sizes=[Message sizes (bytes per write), swept\: the seed'\''s 8 B, 10 KB and 1 MB by default]:LIST:_default' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
'(--lab --local)*--hosts=[Start one agent on each host over ssh, in rank order (h1,h2,...), with the user'\''s ssh config and keys]:HOSTS:_default' \
'--ssh=[The ssh command, with any options, that reaches each of --hosts]:CMD:_default' \
'--remote-path=[linerate'\''s path on the --hosts, when it is not on their PATH]:PATH:_default' \
'(--local)--lab=[Run one agent in each host namespace of this lab (h1 is rank 0)]:NAME:_default' \
'*--lab-hosts=[Only these hosts of the --lab, in rank order (an allocation\: h3,h6,h1)]:HOSTS:_default' \
'--local=[Run N agents as processes on this host'\''s loopback (a scale test)]:N:_default' \
'--coordinator=[Where agents reach the coordinator\: HOST or HOST\:PORT. Under mpirun, rank 0'\''s host (required); under srun, default the job'\''s first host; with --hosts, default this host'\''s address towards the first of them]:HOST[:PORT]:_default' \
'-t+[Length of each step]:TIME:_default' \
'--time=[Length of each step]:TIME:_default' \
'-i+[Between interval samples of each flow]:TIME:_default' \
'--interval=[Between interval samples of each flow]:TIME:_default' \
'--timeout=[Give up the whole run after this long (default\: the plan'\''s length, with room for joining and reporting)]:TIME:_default' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'-P+[Streams of each pair'\''s flow]:N:_default' \
'--streams=[Streams of each pair'\''s flow]:N:_default' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'--all-at-once[Every pair at once instead of one pair at a time]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(job)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__job_commands" \
"*::: :->job" \
&& ret=0

    case $state in
    (job)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-job-command-$line[1]:"
        case $line[1] in
            (halo3d)
_arguments "${_arguments_options[@]}" : \
'(--lab --local)*--hosts=[Start one agent on each host over ssh, in rank order (h1,h2,...), with the user'\''s ssh config and keys]:HOSTS:_default' \
'--ssh=[The ssh command, with any options, that reaches each of --hosts]:CMD:_default' \
'--remote-path=[linerate'\''s path on the --hosts, when it is not on their PATH]:PATH:_default' \
'(--local)--lab=[Run one agent in each host namespace of this lab (h1 is rank 0)]:NAME:_default' \
'*--lab-hosts=[Only these hosts of the --lab, in rank order (an allocation\: h3,h6,h1)]:HOSTS:_default' \
'--local=[Run N agents as processes on this host'\''s loopback (a scale test)]:N:_default' \
'--coordinator=[Where agents reach the coordinator\: HOST or HOST\:PORT. Under mpirun, rank 0'\''s host (required); under srun, default the job'\''s first host; with --hosts, default this host'\''s address towards the first of them]:HOST[:PORT]:_default' \
'-n+[Iterations every rank runs]:N:_default' \
'--iterations=[Iterations every rank runs]:N:_default' \
'--compute=[Compute time per iteration before its exchange (slept, not spun\: the ranks share the lab'\''s cores with its network)]:TIME:_default' \
'--limit=[The job'\''s time limit\: ranks stop there and report what they completed]:TIME:_default' \
'--timeout=[Give up the whole run after this long (default\: the limit, with room for joining and reporting)]:TIME:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'--cells=[Cells each rank holds along x, y and z (one number for a cube)]:N[,N,N]:_default' \
'--values=[Doubles per cell\: a face carries cells x cells x values x 8 bytes]:N:_default' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(all-to-all)
_arguments "${_arguments_options[@]}" : \
'(--lab --local)*--hosts=[Start one agent on each host over ssh, in rank order (h1,h2,...), with the user'\''s ssh config and keys]:HOSTS:_default' \
'--ssh=[The ssh command, with any options, that reaches each of --hosts]:CMD:_default' \
'--remote-path=[linerate'\''s path on the --hosts, when it is not on their PATH]:PATH:_default' \
'(--local)--lab=[Run one agent in each host namespace of this lab (h1 is rank 0)]:NAME:_default' \
'*--lab-hosts=[Only these hosts of the --lab, in rank order (an allocation\: h3,h6,h1)]:HOSTS:_default' \
'--local=[Run N agents as processes on this host'\''s loopback (a scale test)]:N:_default' \
'--coordinator=[Where agents reach the coordinator\: HOST or HOST\:PORT. Under mpirun, rank 0'\''s host (required); under srun, default the job'\''s first host; with --hosts, default this host'\''s address towards the first of them]:HOST[:PORT]:_default' \
'-n+[Iterations every rank runs]:N:_default' \
'--iterations=[Iterations every rank runs]:N:_default' \
'--compute=[Compute time per iteration before its exchange (slept, not spun\: the ranks share the lab'\''s cores with its network)]:TIME:_default' \
'--limit=[The job'\''s time limit\: ranks stop there and report what they completed]:TIME:_default' \
'--timeout=[Give up the whole run after this long (default\: the limit, with room for joining and reporting)]:TIME:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'-Z+[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'--cc=[Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic]:NAME:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout; human output then goes to stderr)]:FILE:_default' \
'--message=[Bytes each rank sends every other rank per iteration]:SIZE:_default' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__job__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-job-help-command-$line[1]:"
        case $line[1] in
            (halo3d)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(all-to-all)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(agent)
_arguments "${_arguments_options[@]}" : \
'--coordinator=[The coordinator to join\: HOST\[\:PORT\] (port 5301 by default)]:HOST[:PORT]:_default' \
'--rank=[This agent'\''s rank]:RANK:_default' \
'--size=[Ranks in the run]:SIZE:_default' \
'--name=[The name the result gives this host (default\: its host name)]:NAME:_default' \
'--listen=[Where this agent'\''s bench server listens for its peers'\'' flows]:ADDR:PORT:_default' \
'--timeout=[Leave when the coordinator is silent this long, or unreachable]:TIME:_default' \
'--log-level=[Least level of the lines logged\: error, warn, info, debug or trace. Default\: info (warn for \`agent\`)]:LEVEL:_default' \
'--log-format=[Log lines as text, or as one JSON object a line (for collectors)]:FORMAT:((text\:"\`TIME LEVEL span{fields}\: message\`"
json\:"\`{"timestamp"\:..,"level"\:..,"message"\:..,"span"\:{..}}\`"))' \
'--token-stdin[Read the run'\''s token from the first line of stdin (how ssh launches pass it); otherwise it comes from LINERATE_RUN_TOKEN, if set]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(send)
_arguments "${_arguments_options[@]}" : \
'--url-file=[Read the target URL from this file (its first line) instead of the command line, so its secret stays out of \`ps\` and shell history]:FILE:_files' \
'--from-memory=[Send SIZE bytes generated in memory instead of files (no source disk)]:SIZE:_default' \
'-P+[Parallel streams, one thread and one socket each]:N:_default' \
'--streams=[Parallel streams, one thread and one socket each]:N:_default' \
'--block=[Block size\: the unit of scheduling, checksums and resume]:BYTES:_default' \
'--server-fingerprint=[The fingerprint of the daemon'\''s certificate (\`linerate serve --root\` prints it at start). Without it, the one recorded in known_servers at the first contact is required, and a first contact records the one it sees, as ssh does]:SHA256:_default' \
'*--exclude=[Leave out source paths matching PATTERN, by rsync'\''s rules (a leading / anchors at the sources'\'' names, a trailing / matches directories only, * stops at /, ** does not, dir/*** is a directory and all in it). Repeatable; with --include and --exclude-from, the first rule that matches a path decides, in the order given]:PATTERN:_default' \
'*--include=[Send source paths matching PATTERN even where a later --exclude matches them (rsync'\''s rules, as --exclude)]:PATTERN:_default' \
'*--exclude-from=[Read exclude patterns from FILE, one per line, as rsync does\: blank lines and lines starting with ; or # skipped, "+ PATTERN" includes, "- PATTERN" excludes]:FILE:_files' \
'--rate=[Cap the whole transfer, in bits/s (e.g. 5G), paced per socket]:RATE:_default' \
'-w+[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--window=[Receive window\: SO_RCVBUF at the receiving end. Default\: kernel autotuning]:BYTES:_default' \
'--sndbuf=[Send buffer (SO_SNDBUF) at the sending end. Default\: kernel autotuning]:BYTES:_default' \
'(--dscp)-S+[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'(--dscp)--tos=[IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16)]:TOS:_default' \
'--dscp=[DSCP code point (0-63, or a name\: ef, af11-af43, cs0-cs7)\: the upper six bits of the TOS byte, its two ECN bits left to the kernel]:CODE:_default' \
'*-B+[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'*--bind=[Local address to connect from; with --stripe, one per path (comma-separated, in --stripe'\''s order) or one for all]:ADDR:_default' \
'*--stripe=[Spread the data streams round-robin over these receiver addresses (comma-separated, e.g. one per NIC or per link), each paired with the -B address at its place; the control connection goes to the target. N paths need at least N streams (-P is raised to N where lower)]:ADDR,...:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--rx-poll=[Receivers poll before blocking (auto\: off; polling measured slower when the receiver writes)]:RX_POLL:((auto\:"Poll on loopback while there are at most four stream threads per core; between namespaces of one host only while threads share cores"
on\:""
off\:""))' \
'--json=[Write the linerate.result/1 document to FILE ('\''-'\'' for stdout)]:FILE:_default' \
'--skip-writes[The receiver checks and discards\: measures the network and CPUs only]' \
'(--ignore-existing -u --update)--no-replace[Refuse the transfer when a file exists at the destination and differs from the source. By default such a file is replaced, at once (the new one is renamed over it when complete), as rsync does]' \
'(-u --update)--ignore-existing[Leave files that exist at the destination as they are, even where they differ (rsync'\''s --ignore-existing)]' \
'-u[Leave files that are newer at the destination than at the source (rsync'\''s -u, --update); replace the others that differ]' \
'--update[Leave files that are newer at the destination than at the source (rsync'\''s -u, --update); replace the others that differ]' \
'--delete[Delete what the destination'\''s copies of the source directories hold and the sources lack, once the transfer is complete (rsync'\''s --delete, done after the transfer). Only inside the destination; paths the --exclude rules leave out are kept. Try it with --dry-run first]' \
'--force[Replace a non-empty directory at the destination where the source now has a file or a link (rsync'\''s --force; --delete does it too). Without either such a run stops and names the directory; an empty one is always replaced]' \
'-n[Change nothing at the receiver\: list what would be created, replaced and deleted, and send no data]' \
'--dry-run[Change nothing at the receiver\: list what would be created, replaced and deleted, and send no data]' \
'-i[List every path created, replaced or deleted, in rsync -i'\''s letters (\`>f.st...... path\`; docs/guide.md#itemize)]' \
'--itemize[List every path created, replaced or deleted, in rsync -i'\''s letters (\`>f.st...... path\`; docs/guide.md#itemize)]' \
'-X[Send extended attributes (the user. namespace; as root also trusted. and security., which a receiver applies only with --keep-special-bits), as rsync'\''s -X]' \
'--xattrs[Send extended attributes (the user. namespace; as root also trusted. and security., which a receiver applies only with --keep-special-bits), as rsync'\''s -X]' \
'-A[Send POSIX ACLs (access and default), as rsync'\''s -A]' \
'--acls[Send POSIX ACLs (access and default), as rsync'\''s -A]' \
'--numeric-ids[Give owners and groups by the numbers sent, not by their names. A receiver keeps owners only when it runs as root, as rsync does]' \
'(--no-replace --ignore-existing -u --update)--overwrite[Replace files that differ\: the default now; kept for older scripts]' \
'--verify[Compare a whole-file BLAKE3 of source and destination at the end]' \
'-c[Decide by contents which files differ, as rsync'\''s -c does\: the sender reads every file for its BLAKE3, the receiver reads each file it holds of the same size and compares; files of the same contents are kept (their time set to the source'\''s) whatever their times say, and files whose size and time match but whose contents differ are sent. Costs a read of both trees]' \
'--checksum[Decide by contents which files differ, as rsync'\''s -c does\: the sender reads every file for its BLAKE3, the receiver reads each file it holds of the same size and compares; files of the same contents are kept (their time set to the source'\''s) whatever their times say, and files whose size and time match but whose contents differ are sent. Costs a read of both trees]' \
'--no-block-checksum[Send blocks without their XXH3 checksum\: only TCP'\''s own checksum (and --verify, if given) guards the data. Saves both ends one pass over every byte where the CPU is the limit]' \
'--no-fsync[Do not sync\: the receiver normally syncs each file'\''s data before it journals its blocks as done and before it renames the file into place, and each directory before it reports the transfer complete, so a crash after "complete" loses nothing. For scratch data]' \
'--no-encrypt[Send in the clear, to a receiver started with --no-encrypt (its URL has no fp=). By default everything after each connection'\''s greeting is encrypted (TLS 1.3, AES-128-GCM where the CPU has AES instructions) and the receiver must hold the certificate the URL names]' \
'--follow-links[Follow symbolic links instead of recreating them]' \
'--direct[Bypass the page cache at both ends (O_DIRECT), for cold disk-to-disk runs\: the sender reads and the receiver writes whole pages of every file above 1 MiB directly. Smaller files and a file'\''s last partial page go through the cache, as does everything on a file system that refuses O_DIRECT (the summary says how much went direct). --block must then be a multiple of 4 KiB]' \
'--evict[Drop each block from the page cache once it is sent and once it is written (flushed to disk first), so a transfer larger than memory does not push the host'\''s other data out of the cache]' \
'(-6)-4[Use IPv4 only]' \
'-6[Use IPv6 only]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-q[Print no progress]' \
'--quiet[Print no progress]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::args -- Files and directories to send, then the target\: a linerate\:// URL printed by `linerate recv`, `-` to read that URL from standard input (so its secret stays out of `ps`), or HOST\[\:PORT\]\:/DEST for `serve --root`. With --url-file, only the sources. As with rsync, a directory given with a trailing slash (`data/`) sends what it holds into DEST, which takes its mode and time; without one (`data`), it lands as DEST/data. `--dry-run -i` lists where each path would land:_default' \
&& ret=0
;;
(recv)
_arguments "${_arguments_options[@]}" : \
'--bind=[Local address to listen on]:BIND:_default' \
'-p+[Port to listen on (0\: any free port)]:PORT:_default' \
'--port=[Port to listen on (0\: any free port)]:PORT:_default' \
'--advertise=[Host name the URL gives the sender. Default\: the bind address if it is a specific one, else this host'\''s name]:ADVERTISE:_default' \
'*--stripe=[This host'\''s addresses to offer for striping (comma-separated, e.g. one per NIC)\: the URL lists them, and the sender spreads its streams over them, paired with its -B list, unless it gives its own --stripe]:ADDR,...:_default' \
'--log=[Log file of a receiver in the background]:FILE:_files' \
'--wait=[Give up when no sender has connected this long after the URL was printed, or when a transfer cut short (the sender'\''s Ctrl-C, a lost connection) has not been resumed this long after (s, or with ms/s/m/h; 0\: wait for ever for the first, not at all after a cut). Until then the sender'\''s "rerun the same command" resumes it. A receiver in the background whose sender never came would otherwise hold its port for ever]:TIME:_default' \
'--session-memory=[Memory one transfer'\''s manifest and bookkeeping may take, charged at about 430 bytes an entry plus its path\: the default holds about 4 million entries with 100-byte paths]:SIZE:_default' \
'--max-entries=[Entries (files, directories, links) one transfer may announce]:N:_default' \
'--log-level=[Least level of the lines logged\: error, warn, info, debug or trace. Default\: info (warn for \`agent\`)]:LEVEL:_default' \
'--log-format=[Log lines as text, or as one JSON object a line (for collectors)]:FORMAT:((text\:"\`TIME LEVEL span{fields}\: message\`"
json\:"\`{"timestamp"\:..,"level"\:..,"message"\:..,"span"\:{..}}\`"))' \
'--foreground[Stay in the foreground after printing the URL. By default, when stdout is not a terminal (as in \`ssh host linerate recv DIR | linerate send SRC -\`), the receiver moves to the background so the command substitution returns]' \
'--no-encrypt[Take the transfer in the clear\: the URL then has no fp= and the sender must pass --no-encrypt too. By default the receiver makes a certificate for this session, puts its fingerprint in the URL, and refuses senders that do not encrypt]' \
'--keep-special-bits[Apply setuid, setgid and sticky bits as senders send them. Off, they are dropped and the umask applies. Only for trusted senders\: as root, a sender could otherwise plant a setuid-root program]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':dir -- Directory to receive into (created if missing):_files' \
&& ret=0
;;
(keys)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__keys_commands" \
"*::: :->keys" \
&& ret=0

    case $state in
    (keys)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-keys-command-$line[1]:"
        case $line[1] in
            (new)
_arguments "${_arguments_options[@]}" : \
'--force[Replace an existing key (daemons that list the old one refuse this user until they list the new one)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__keys__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-keys-help-command-$line[1]:"
        case $line[1] in
            (new)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(demo)
_arguments "${_arguments_options[@]}" : \
'--out=[Folder for the result documents and the report]:OUT:_files' \
'--seconds=[Seconds per bench run]:SECONDS:_default' \
'--lab[Also run short WAN and tuning studies through a lab (root)]' \
'--no-compare[Skip the side-by-side run of the installed peers]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(lab)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__lab_commands" \
"*::: :->lab" \
&& ret=0

    case $state in
    (lab)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-lab-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
'--name=[Lab name]:NAME:_default' \
'--hosts=[Host namespaces (h1, h2, ...); 2 unless a --topology says otherwise]:HOSTS:_default' \
'--mtu=[MTU of every lab link]:MTU:_default' \
'--backend=[What makes the conditions]:BACKEND:((auto\:"netem when the kernel has it, else the built-in emulator"
netem\:""
emulator\:""
veth\:"Plain veth (and TBF for --rate)\: no delay or loss"
htb\:"A --topology'\''s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)"))' \
'--links=[Parallel links per host, to its peer or to the router, each with the conditions given here and its own addresses (see \`lab status\`); \`lab set --link N\` changes one]:LINKS:_default' \
'--bond=[Join each host'\''s links into one bond that hashes every flow to one link (lacp\: layer 3+4, as an 802.3ad bond with xmit_hash_policy=layer3+4); the host'\''s address is then the bond'\''s]:BOND:((lacp\:"A flow stays on one member, chosen by a hash of its addresses and ports"))' \
'--rtt=[Round-trip time added by the link (e.g. 44ms); half each way]:RTT:_default' \
'--jitter=[Delay variation each way, plus or minus (packets keep their order)]:JITTER:_default' \
'--loss=[Packet loss (e.g. 0.1%)]:LOSS:_default' \
'--loss-burst=[Mean length of loss bursts in packets (Gilbert-Elliott); 1 = independent]:PACKETS:_default' \
'--reorder=[Packets reordered, e.g. 0.02%\: each overtakes the few packets queued just before it (--reorder-depth), as on a path with parallel lanes]:REORDER:_default' \
'--reorder-model=[How a reordered packet overtakes others. displace (default)\: it crosses the link'\''s rate and delay as every packet does and leaves ahead of the last --reorder-depth packets. netem\: it skips the delay line and leaves at once, as netem'\''s reorder does; on a long delay its round trip is near zero, which bbr takes for the path'\''s and throttles itself to (the verdict calls such a run invalid)]:MODEL:((displace\:"Ahead of the last few packets queued (--reorder-depth)"
netem\:"Past the whole delay line, at once (netem'\''s reorder)"))' \
'--reorder-depth=[Packets a reordered one overtakes with --reorder-model displace (default 3)]:PACKETS:_default' \
'--duplicate=[Packets delivered twice]:DUPLICATE:_default' \
'--rate=[Bottleneck rate (e.g. 10gbit, 1G); \`none\` removes it]:RATE:_default' \
'--queue=[Bottleneck queue in bytes (default\: one RTT of the rate, at least 10 ms)]:QUEUE:_default' \
'--seed=[Seed of the random decisions (same seed, same fates)]:SEED:_default' \
'--topology=[Join the hosts through switches whose ports have per-class queues, ETS or strict priority, ECN marking and PFC pause (made by the emulator)]:TOPOLOGY:((star\:"Every host on one switch"
dumbbell\:"Two switches joined by one link (the taper sets its rate), half the hosts on each"
leaf-spine\:"Hosts on leaves, every leaf joined to every spine (ECMP by flow hash)"))' \
'--leaves=[Leaf switches of a leaf-spine fabric]:LEAVES:_default' \
'--spines=[Spine switches of a leaf-spine fabric]:SPINES:_default' \
'--hosts-per-leaf=[Hosts on each leaf of a leaf-spine fabric]:HOSTS_PER_LEAF:_default' \
'--taper=[Oversubscription DOWN\:UP\: 4\:1 gives a leaf'\''s uplinks (or a dumbbell'\''s middle link) a quarter of its hosts'\'' rate together]:DOWN:UP:_default' \
'*--class=[A traffic class of every port, repeated\: NAME\:dscp=LIST\:strict or NAME\:dscp=LIST\:ets=WEIGHT, optionally \:lossless (PFC). dscp=* takes the code points no other class names. Default\: one best-effort class]:CLASS:_default' \
'--ecn-threshold=[Mark ECN-capable packets CE when their class'\''s queue holds more than this (hosts then negotiate ECN\: net.ipv4.tcp_ecn=1)]:BYTES:_default' \
'--pfc-xoff=[Bytes a switch holds from one upstream port in a lossless class before pausing it (XON is half). Default 64K]:BYTES:_default' \
'--hop-delay=[Propagation delay of every fabric link (e.g. 5us)]:HOP_DELAY:_default' \
'--router[Route between hosts through a router namespace (kernel forwarding on veth and netem; the emulator always has one)]' \
'--dry-run[Print the ip/tc commands instead of running them]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(set)
_arguments "${_arguments_options[@]}" : \
'--name=[Lab name]:NAME:_default' \
'--link=[Change only this link of a lab with --links (1 to N)]:N:_default' \
'(--link)--host=[Change only the router'\''s link into this host (h1, h2, ...) of a lab with --router on kernel links (--backend veth or netem)\: what reaches the host crosses it]:HOST:_default' \
'--rtt=[Round-trip time added by the link (e.g. 44ms); half each way]:RTT:_default' \
'--jitter=[Delay variation each way, plus or minus (packets keep their order)]:JITTER:_default' \
'--loss=[Packet loss (e.g. 0.1%)]:LOSS:_default' \
'--loss-burst=[Mean length of loss bursts in packets (Gilbert-Elliott); 1 = independent]:PACKETS:_default' \
'--reorder=[Packets reordered, e.g. 0.02%\: each overtakes the few packets queued just before it (--reorder-depth), as on a path with parallel lanes]:REORDER:_default' \
'--reorder-model=[How a reordered packet overtakes others. displace (default)\: it crosses the link'\''s rate and delay as every packet does and leaves ahead of the last --reorder-depth packets. netem\: it skips the delay line and leaves at once, as netem'\''s reorder does; on a long delay its round trip is near zero, which bbr takes for the path'\''s and throttles itself to (the verdict calls such a run invalid)]:MODEL:((displace\:"Ahead of the last few packets queued (--reorder-depth)"
netem\:"Past the whole delay line, at once (netem'\''s reorder)"))' \
'--reorder-depth=[Packets a reordered one overtakes with --reorder-model displace (default 3)]:PACKETS:_default' \
'--duplicate=[Packets delivered twice]:DUPLICATE:_default' \
'--rate=[Bottleneck rate (e.g. 10gbit, 1G); \`none\` removes it]:RATE:_default' \
'--queue=[Bottleneck queue in bytes (default\: one RTT of the rate, at least 10 ms)]:QUEUE:_default' \
'--seed=[Seed of the random decisions (same seed, same fates)]:SEED:_default' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--name=[One lab (default\: all)]:NAME:_default' \
'--json[Print JSON]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(exec)
_arguments "${_arguments_options[@]}" : \
'--name=[Lab name]:NAME:_default' \
'-h[Print help]' \
'--help[Print help]' \
':host -- h1, h2, ... or r for the router:_default' \
'*::command -- The command and its arguments (after --):_default' \
&& ret=0
;;
(addr)
_arguments "${_arguments_options[@]}" : \
'--name=[Lab name]:NAME:_default' \
'--link=[The address on this one of the host'\''s parallel links (--links), instead of its first link'\''s or its bond'\''s]:N:_default' \
'-6[The IPv6 address instead]' \
'-h[Print help]' \
'--help[Print help]' \
':host:_default' \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
'--name=[Lab name]:NAME:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__lab__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-lab-help-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(set)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(exec)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(addr)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(study)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__study_commands" \
"*::: :->study" \
&& ret=0

    case $state in
    (study)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-study-command-$line[1]:"
        case $line[1] in
            (wan)
_arguments "${_arguments_options[@]}" : \
'--json=[Where to write the linerate.result/1 document]:JSON:_default' \
'-t+[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--time=[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--cc=[Congestion control for every run (default\: the host'\''s)]:CC:_default' \
'--name=[Name of the lab the study builds (removed at the end)]:NAME:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'*--rtts=[RTTs to sweep, in ms]:RTTS:_default' \
'*--streams=[Stream counts to compare]:STREAMS:_default' \
'--rate=[Bottleneck rate of the emulated WAN; BDP-sized buffers are sized for it]:RATE:_default' \
'--stability-time=[Length of the run over time at 44 ms with reordering (default 30 s, 8 s with --quick)]:STABILITY_TIME:_default' \
'--backend=[Backend for the WAN conditions]:BACKEND:((auto\:"netem when the kernel has it, else the built-in emulator"
netem\:""
emulator\:""
veth\:"Plain veth (and TBF for --rate)\: no delay or loss"
htb\:"A --topology'\''s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)"))' \
'--quick[A short run of every part, for CI (about a minute)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(lan)
_arguments "${_arguments_options[@]}" : \
'--json=[Where to write the linerate.result/1 document]:JSON:_default' \
'-t+[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--time=[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--cc=[Congestion control for every run (default\: the host'\''s)]:CC:_default' \
'--name=[Name of the lab the study builds (removed at the end)]:NAME:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'*--streams=[Stream counts to sweep]:STREAMS:_default' \
'--quick[A short run of every part, for CI (about a minute)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(tuning)
_arguments "${_arguments_options[@]}" : \
'--json=[Where to write the linerate.result/1 document]:JSON:_default' \
'-t+[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--time=[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--cc=[Congestion control for every run (default\: the host'\''s)]:CC:_default' \
'--name=[Name of the lab the study builds (removed at the end)]:NAME:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--rtt=[RTT of the lab WAN]:RTT:_default' \
'--rate=[Bottleneck rate of the lab WAN, and the plan'\''s target]:RATE:_default' \
'--rounds=[Before/after rounds, alternating (default 3, 1 with --quick)]:ROUNDS:_default' \
'--backend=[Backend for the WAN conditions]:BACKEND:((auto\:"netem when the kernel has it, else the built-in emulator"
netem\:""
emulator\:""
veth\:"Plain veth (and TBF for --rate)\: no delay or loss"
htb\:"A --topology'\''s switches as kernel namespaces with HTB classes per port (no PFC, ECN or hop delay)"))' \
'--quick[A short run of every part, for CI (about a minute)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(interference)
_arguments "${_arguments_options[@]}" : \
'--json=[Where to write the linerate.result/1 document]:JSON:_default' \
'-t+[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--time=[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--cc=[Congestion control for every run (default\: the host'\''s)]:CC:_default' \
'--name=[Name of the lab the study builds (removed at the end)]:NAME:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--rate=[Every host link'\''s rate]:RATE:_default' \
'--taper=[Oversubscription of the leaves'\'' uplinks]:TAPER:_default' \
'--stagger=[How long the bandwidth job runs before the latency job starts (the paper'\''s 10 s; 2 s with --quick)]:STAGGER:_default' \
'--iterations=[Iterations of the latency job (default 5000, 1000 with --quick)]:ITERATIONS:_default' \
'--message=[Bytes the latency job sends every other rank per iteration]:MESSAGE:_default' \
'--cells=[Cells per side of each bandwidth-job rank]:CELLS:_default' \
'--queue=[Each switch port'\''s buffer per class (a switch of the paper'\''s kind shares 16 MB between its ports)]:QUEUE:_default' \
'--seed=[Seed of the random disjoint allocations]:SEED:_default' \
'--backend=[The fabric'\''s switches\: the emulator (every configuration), or kernel switches with HTB classes (faster; no PFC, so its configuration is skipped)]:BACKEND:((emulator\:"The emulator'\''s switches"
htb\:"Kernel switches with HTB classes"))' \
'--quick[A short run of every part, for CI (about a minute)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(striping)
_arguments "${_arguments_options[@]}" : \
'--json=[Where to write the linerate.result/1 document]:JSON:_default' \
'-t+[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--time=[Seconds per bench run (default 5, 2 with --quick)]:TIME:_default' \
'--cc=[Congestion control for every run (default\: the host'\''s)]:CC:_default' \
'--name=[Name of the lab the study builds (removed at the end)]:NAME:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--links=[Parallel links between the two hosts (default 4, 2 with --quick)]:LINKS:_default' \
'--rate=[Each link'\''s rate]:RATE:_default' \
'--file-size=[Size of the file each transfer sends (default 1G, 64M with --quick)]:FILE_SIZE:_default' \
'--quick[A short run of every part, for CI (about a minute)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__study__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-study-help-command-$line[1]:"
        case $line[1] in
            (wan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(lan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(tuning)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(interference)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(striping)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(compare)
_arguments "${_arguments_options[@]}" : \
'*--tools=[Tools to run, in this order in the first round (default\: linerate,iperf2,iperf3,nuttcp; files mode\: linerate,rsync,scp,lftp,gridftp,wdt, those without an adapter reported as skipped; latency mode\: linerate,sockperf,qperf,iperf2; udp mode\: linerate,iperf2,iperf3)]:TOOLS:_default' \
'--mode=[]:MODE:((mem\:"Memory to memory\: linerate bench, iperf2, iperf3, nuttcp"
files\:"Files from page cache to a directory\: linerate send, rsync (daemon)"
latency\:"Ping-pong round trips\: linerate latency, sockperf, qperf, iperf2 --bounceback"
udp\:"UDP at one rate\: linerate bench --udp, iperf2 -u, iperf3 -u"))' \
'--dataset=[Files mode\: what to send]:DATASET:((large\:"One 512 MiB file"
small\:"4000 files of 4 KiB"
mixed\:"8 files of 32 MiB and 2000 of 4 KiB"))' \
'*-P+[Stream counts (mem mode; files mode uses the largest for linerate)]:STREAMS:_default' \
'*--streams=[Stream counts (mem mode; files mode uses the largest for linerate)]:STREAMS:_default' \
'-t+[Seconds per run (mem, latency and udp modes)]:TIME:_default' \
'--time=[Seconds per run (mem, latency and udp modes)]:TIME:_default' \
'--size=[Latency mode\: request and reply size in bytes (64\: iperf2 --bounceback'\''s client hangs below it; sockperf takes 14 and up)]:SIZE:_default' \
'-b+[UDP mode\: the rate of the one stream, bits/s (e.g. 500M, 2G)]:RATE:_default' \
'--bitrate=[UDP mode\: the rate of the one stream, bits/s (e.g. 500M, 2G)]:RATE:_default' \
'-l+[UDP mode\: datagram payload bytes]:LEN:_default' \
'--len=[UDP mode\: datagram payload bytes]:LEN:_default' \
'--rounds=[Rounds; the order of the tools rotates each round]:ROUNDS:_default' \
'--lab=[Run inside a lab\: servers in h2, clients in h1 (root)]:LAB:_default' \
'--json=[Where to write the linerate.result/1 document (kind compare)]:JSON:_default' \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--udp[Latency mode\: the ping-pong over UDP (linerate --udp, sockperf, qperf udp_lat)]' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
'()--archive=[Draw the archive'\''s series over time instead\: each with its normal band and the regressions named (the default archive, or this one\: a path, sqlite\:PATH or postgres\://...)]::ARCHIVE:_default' \
'--since=[Only series with a run in this last span (30m, 12h, 7d)]:SPAN:_default' \
'--kind=[Only this kind of run (bench, latency, ...)]:KIND:_default' \
'--from=[Only series whose data left this host (its name)]:HOST:_default' \
'--to=[Only series whose data reached this host (its name)]:HOST:_default' \
'--series=[One series (its id, or the start of it)]:ID:_default' \
'-o+[The HTML page to write]:OUT:_files' \
'--out=[The HTML page to write]:OUT:_files' \
'--csv=[Also write each figure'\''s data as CSV into this folder]:CSV:_files' \
'-h[Print help]' \
'--help[Print help]' \
'*::results -- Result documents (linerate.result/1), or folders of them:_files' \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
'--archive=[The archive to read (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'--since=[Only series with a run in this last span (30m, 12h, 7d)]:SPAN:_default' \
'--kind=[Only this kind of run (bench, latency, ...)]:KIND:_default' \
'--from=[Only series whose data left this host (its name)]:HOST:_default' \
'--to=[Only series whose data reached this host (its name)]:HOST:_default' \
'--series=[One series (its id, or the start of it)]:ID:_default' \
'--json=[Write the answer as JSON to FILE (- for stdout) instead of a table]:FILE:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(archive)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__archive_commands" \
"*::: :->archive" \
&& ret=0

    case $state in
    (archive)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-archive-command-$line[1]:"
        case $line[1] in
            (import)
_arguments "${_arguments_options[@]}" : \
'--archive=[The archive to record into (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'-h[Print help]' \
'--help[Print help]' \
'*::paths -- Files, or folders searched for *.json files:_files' \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
'--series=[Only this series (its id)]:ID:_default' \
'-o+[Write to FILE instead of stdout]:FILE:_files' \
'--output=[Write to FILE instead of stdout]:FILE:_files' \
'--archive=[The archive to read (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(flush)
_arguments "${_arguments_options[@]}" : \
'--archive=[The archive to record into (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(acknowledge)
_arguments "${_arguments_options[@]}" : \
'--archive=[The archive (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'-h[Print help]' \
'--help[Print help]' \
':series -- The series (its id, or the start of it), as history lists it:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__archive__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-archive-help-command-$line[1]:"
        case $line[1] in
            (import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(flush)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(acknowledge)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(schedule)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__schedule_commands" \
"*::: :->schedule" \
&& ret=0

    case $state in
    (schedule)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-schedule-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
'--archive=[Record the result in this archive\: a path, sqlite\:PATH, a site archive postgres\://USER\:PASSWORD@HOST/DB, or none. Default\: \$LINERATE_ARCHIVE, else archive.db in \$XDG_DATA_HOME/linerate (~/.local/share/linerate)]:ARCHIVE:_default' \
'--pidfile=[Write the process id to FILE, and remove it when the process stops]:FILE:_files' \
'--logfile=[Append the log to FILE instead of standard error]:FILE:_files' \
'(--archive)--no-archive[Record nothing (the same as --archive none)]' \
'-D[Go into the background once started (the command returns at once)]' \
'--daemon[Go into the background once started (the command returns at once)]' \
'-h[Print help]' \
'--help[Print help]' \
':file -- The schedule file (TOML):_files' \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
':file -- The schedule file (TOML):_files' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--json[Print the state as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'::name -- One schedule (its name); default\: every schedule that ran here:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__schedule__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-schedule-help-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(dashboard)
_arguments "${_arguments_options[@]}" : \
'--archive=[The archive to read (a path, sqlite\:PATH or postgres\://...). Default\: as bench records]:ARCHIVE:_default' \
'--listen=[Address and port to serve on]:ADDR:PORT:_default' \
'--since=[Show series with a run in this last span]:SPAN:_default' \
'--stale=[Grey a series whose latest run is older than this (default\: three of its usual gaps, at least 1m)]:SPAN:_default' \
'--allow-remote[Serve on an address other hosts can reach (the pages name hosts and paths)]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(tune)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
":: :_linerate__subcmd__tune_commands" \
"*::: :->tune" \
&& ret=0

    case $state in
    (tune)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-tune-command-$line[1]:"
        case $line[1] in
            (audit)
_arguments "${_arguments_options[@]}" : \
'--rate=[Target rate (default\: the fastest audited link, else 10gbit)]:RATE:_default' \
'--rtt=[Round-trip time to tune for (default 100ms, ESnet'\''s convention for WAN hosts)]:RTT:_default' \
'--loss=[Expected packet loss (e.g. 0.02%), for the Mathis bound and the choice of bbr]:LOSS:_default' \
'-P+[Streams you will run (default\: the fewest that can reach the rate)]:STREAMS:_default' \
'--streams=[Streams you will run (default\: the fewest that can reach the rate)]:STREAMS:_default' \
'--mss=[Segment size (default\: from the largest MTU audited)]:MSS:_default' \
'--iface=[Only this interface (default\: every physical one)]:IFACE:_default' \
'--root=[Read a fixture tree (proc/, sys/, ethtool/, tc/) instead of this host]:DIR:_files' \
'--json=[Write a linerate.audit/1 document (\`-\` for stdout)]:JSON:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(plan)
_arguments "${_arguments_options[@]}" : \
'--rate=[Target rate (default\: the fastest audited link, else 10gbit)]:RATE:_default' \
'--rtt=[Round-trip time to tune for (default 100ms, ESnet'\''s convention for WAN hosts)]:RTT:_default' \
'--loss=[Expected packet loss (e.g. 0.02%), for the Mathis bound and the choice of bbr]:LOSS:_default' \
'-P+[Streams you will run (default\: the fewest that can reach the rate)]:STREAMS:_default' \
'--streams=[Streams you will run (default\: the fewest that can reach the rate)]:STREAMS:_default' \
'--mss=[Segment size (default\: from the largest MTU audited)]:MSS:_default' \
'--iface=[Only this interface (default\: every physical one)]:IFACE:_default' \
'--root=[Read a fixture tree (proc/, sys/, ethtool/, tc/) instead of this host]:DIR:_files' \
'-o+[Write the plan (linerate.plan/1) for \`tune apply --plan\`]:OUT:_files' \
'--out=[Write the plan (linerate.plan/1) for \`tune apply --plan\`]:OUT:_files' \
'--sysctl-out=[Write the sysctls as a file for /etc/sysctl.d]:SYSCTL_OUT:_files' \
'--script-out=[Write the NIC, qdisc and CPU commands as a shell script]:SCRIPT_OUT:_files' \
'--json=[Print the plan as JSON (\`-\`) or write it to FILE]:JSON:_default' \
'--cores=[Cores of the end with fewer (default\: this host'\''s online CPUs)]:N:_default' \
'--per-core-rate=[What one stream on one core carries, bits/s, as \`linerate bench -P 1\` measured it between the hosts (e.g. 25G). Default\: measured here, one stream on loopback for 1 s (not with --root). The plan takes a stream a core up to the target, and says when the cores, not the window, bound it]:RATE:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
'(--profile)--plan=[A plan written by \`tune plan -o\`]:PLAN:_files' \
'--profile=[A built-in target, planned against this host]:PROFILE:_default' \
'(--lab)--netns=[Work inside this network namespace (/run/netns/NAME) instead of the host]:NETNS:_default' \
'--lab=[Work inside a host of this lab (with --host)]:LAB:_default' \
'--host=[The lab host (h1, h2, ...)]:HOST:_default' \
'--state=[State file (default\: /var/lib/linerate/tune/SCOPE.json, or \$LINERATE_TUNE_DIR)]:STATE:_files' \
'--dry-run[Show what would change, change nothing]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(revert)
_arguments "${_arguments_options[@]}" : \
'(--lab)--netns=[Work inside this network namespace (/run/netns/NAME) instead of the host]:NETNS:_default' \
'--lab=[Work inside a host of this lab (with --host)]:LAB:_default' \
'--host=[The lab host (h1, h2, ...)]:HOST:_default' \
'--state=[State file (default\: /var/lib/linerate/tune/SCOPE.json, or \$LINERATE_TUNE_DIR)]:STATE:_files' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(capture)
_arguments "${_arguments_options[@]}" : \
'--iface=[]:IFACE:_default' \
'-h[Print help]' \
'--help[Print help]' \
':dir:_files' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__tune__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-tune-help-command-$line[1]:"
        case $line[1] in
            (audit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(plan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(revert)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(capture)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(man)
_arguments "${_arguments_options[@]}" : \
'--out=[Folder for linerate.1 and a page per subcommand (linerate-bench.1, ...)]:OUT:_files' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'-h[Print help]' \
'--help[Print help]' \
':shell -- The shell to complete for:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-command-$line[1]:"
        case $line[1] in
            (serve)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(bench)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(latency)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(incast)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(job)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__job_commands" \
"*::: :->job" \
&& ret=0

    case $state in
    (job)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-job-command-$line[1]:"
        case $line[1] in
            (halo3d)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(all-to-all)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(agent)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(send)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(recv)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(keys)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__keys_commands" \
"*::: :->keys" \
&& ret=0

    case $state in
    (keys)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-keys-command-$line[1]:"
        case $line[1] in
            (new)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(demo)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(lab)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__lab_commands" \
"*::: :->lab" \
&& ret=0

    case $state in
    (lab)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-lab-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(set)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(exec)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(addr)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(study)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__study_commands" \
"*::: :->study" \
&& ret=0

    case $state in
    (study)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-study-command-$line[1]:"
        case $line[1] in
            (wan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(lan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(tuning)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(interference)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(striping)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(compare)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(archive)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__archive_commands" \
"*::: :->archive" \
&& ret=0

    case $state in
    (archive)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-archive-command-$line[1]:"
        case $line[1] in
            (import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(flush)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(acknowledge)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(schedule)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__schedule_commands" \
"*::: :->schedule" \
&& ret=0

    case $state in
    (schedule)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-schedule-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(dashboard)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(tune)
_arguments "${_arguments_options[@]}" : \
":: :_linerate__subcmd__help__subcmd__tune_commands" \
"*::: :->tune" \
&& ret=0

    case $state in
    (tune)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:linerate-help-tune-command-$line[1]:"
        case $line[1] in
            (audit)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(plan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(revert)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(capture)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_linerate_commands] )) ||
_linerate_commands() {
    local commands; commands=(
'serve:Answer every kind of session on one TCP port' \
'bench:Memory-to-memory throughput, one thread per stream, with TCP_INFO and a verdict' \
'latency:Round-trip percentiles and bandwidth against message size, idle and under load' \
'incast:Many senders on many hosts to one receiver, swept over senders x hosts x message size' \
'mesh:Every ordered pair of a host list, pair by pair or all at once; the slowest named' \
'job:Proxy applications across many hosts\: a 3D halo exchange, an all-to-all' \
'agent:Join a many-host run as one host'\''s agent (what incast'\''s and mesh'\''s launchers start)' \
'send:Send files, trees or generated data to \`recv\` or \`serve --root\`, in parallel, resumable' \
'recv:Receive one transfer into a directory; prints the URL to send to' \
'keys:This user'\''s client key for daemons (\`serve --root\`)\: make it, print it' \
'demo:Run the whole tool on loopback with generated data\: no root, no setup' \
'lab:Namespace testbeds with WAN conditions (netem, or the built-in emulator)' \
'study:The seed papers'\'' studies on a lab, one command each (root)' \
'compare:linerate and the installed peers (iperf2, iperf3, nuttcp; rsync for files) side by side' \
'report:Result documents to one self-contained HTML page of figures (and CSV)' \
'history:What ran between which hosts\: each series'\'' latest result against its normal range' \
'archive:Results in and out of the archive\: import older ones and iperf3'\''s, export all' \
'schedule:Run tests on a schedule (bench, latency, mesh, send), one throughput test a path at once' \
'dashboard:Serve the archive read-only\: a grid of paths, each series over time, regressions, /metrics' \
'tune:Audit host settings, plan them from a target rate and RTT, apply and revert' \
'man:Write the manual pages (linerate.1 and one per subcommand)' \
'completions:Print shell completions (bash, zsh, fish, elvish, powershell)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate commands' commands "$@"
}
(( $+functions[_linerate__subcmd__agent_commands] )) ||
_linerate__subcmd__agent_commands() {
    local commands; commands=()
    _describe -t commands 'linerate agent commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive_commands] )) ||
_linerate__subcmd__archive_commands() {
    local commands; commands=(
'import:Record result documents and iperf3 -J files, or the folders that hold them' \
'export:Write recorded documents back out, one JSON document a line, oldest first' \
'flush:Record the results waiting in the spool (those a run could not record)' \
'acknowledge:Accept a series'\'' change as its new normal now (before five runs make it so)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate archive commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__acknowledge_commands] )) ||
_linerate__subcmd__archive__subcmd__acknowledge_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive acknowledge commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__export_commands] )) ||
_linerate__subcmd__archive__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive export commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__flush_commands] )) ||
_linerate__subcmd__archive__subcmd__flush_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive flush commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help_commands] )) ||
_linerate__subcmd__archive__subcmd__help_commands() {
    local commands; commands=(
'import:Record result documents and iperf3 -J files, or the folders that hold them' \
'export:Write recorded documents back out, one JSON document a line, oldest first' \
'flush:Record the results waiting in the spool (those a run could not record)' \
'acknowledge:Accept a series'\'' change as its new normal now (before five runs make it so)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate archive help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help__subcmd__acknowledge_commands] )) ||
_linerate__subcmd__archive__subcmd__help__subcmd__acknowledge_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive help acknowledge commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help__subcmd__export_commands] )) ||
_linerate__subcmd__archive__subcmd__help__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive help export commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help__subcmd__flush_commands] )) ||
_linerate__subcmd__archive__subcmd__help__subcmd__flush_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive help flush commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__archive__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__help__subcmd__import_commands] )) ||
_linerate__subcmd__archive__subcmd__help__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive help import commands' commands "$@"
}
(( $+functions[_linerate__subcmd__archive__subcmd__import_commands] )) ||
_linerate__subcmd__archive__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'linerate archive import commands' commands "$@"
}
(( $+functions[_linerate__subcmd__bench_commands] )) ||
_linerate__subcmd__bench_commands() {
    local commands; commands=()
    _describe -t commands 'linerate bench commands' commands "$@"
}
(( $+functions[_linerate__subcmd__compare_commands] )) ||
_linerate__subcmd__compare_commands() {
    local commands; commands=()
    _describe -t commands 'linerate compare commands' commands "$@"
}
(( $+functions[_linerate__subcmd__completions_commands] )) ||
_linerate__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'linerate completions commands' commands "$@"
}
(( $+functions[_linerate__subcmd__dashboard_commands] )) ||
_linerate__subcmd__dashboard_commands() {
    local commands; commands=()
    _describe -t commands 'linerate dashboard commands' commands "$@"
}
(( $+functions[_linerate__subcmd__demo_commands] )) ||
_linerate__subcmd__demo_commands() {
    local commands; commands=()
    _describe -t commands 'linerate demo commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help_commands] )) ||
_linerate__subcmd__help_commands() {
    local commands; commands=(
'serve:Answer every kind of session on one TCP port' \
'bench:Memory-to-memory throughput, one thread per stream, with TCP_INFO and a verdict' \
'latency:Round-trip percentiles and bandwidth against message size, idle and under load' \
'incast:Many senders on many hosts to one receiver, swept over senders x hosts x message size' \
'mesh:Every ordered pair of a host list, pair by pair or all at once; the slowest named' \
'job:Proxy applications across many hosts\: a 3D halo exchange, an all-to-all' \
'agent:Join a many-host run as one host'\''s agent (what incast'\''s and mesh'\''s launchers start)' \
'send:Send files, trees or generated data to \`recv\` or \`serve --root\`, in parallel, resumable' \
'recv:Receive one transfer into a directory; prints the URL to send to' \
'keys:This user'\''s client key for daemons (\`serve --root\`)\: make it, print it' \
'demo:Run the whole tool on loopback with generated data\: no root, no setup' \
'lab:Namespace testbeds with WAN conditions (netem, or the built-in emulator)' \
'study:The seed papers'\'' studies on a lab, one command each (root)' \
'compare:linerate and the installed peers (iperf2, iperf3, nuttcp; rsync for files) side by side' \
'report:Result documents to one self-contained HTML page of figures (and CSV)' \
'history:What ran between which hosts\: each series'\'' latest result against its normal range' \
'archive:Results in and out of the archive\: import older ones and iperf3'\''s, export all' \
'schedule:Run tests on a schedule (bench, latency, mesh, send), one throughput test a path at once' \
'dashboard:Serve the archive read-only\: a grid of paths, each series over time, regressions, /metrics' \
'tune:Audit host settings, plan them from a target rate and RTT, apply and revert' \
'man:Write the manual pages (linerate.1 and one per subcommand)' \
'completions:Print shell completions (bash, zsh, fish, elvish, powershell)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__agent_commands] )) ||
_linerate__subcmd__help__subcmd__agent_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help agent commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__archive_commands] )) ||
_linerate__subcmd__help__subcmd__archive_commands() {
    local commands; commands=(
'import:Record result documents and iperf3 -J files, or the folders that hold them' \
'export:Write recorded documents back out, one JSON document a line, oldest first' \
'flush:Record the results waiting in the spool (those a run could not record)' \
'acknowledge:Accept a series'\'' change as its new normal now (before five runs make it so)' \
    )
    _describe -t commands 'linerate help archive commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__archive__subcmd__acknowledge_commands] )) ||
_linerate__subcmd__help__subcmd__archive__subcmd__acknowledge_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help archive acknowledge commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__archive__subcmd__export_commands] )) ||
_linerate__subcmd__help__subcmd__archive__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help archive export commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__archive__subcmd__flush_commands] )) ||
_linerate__subcmd__help__subcmd__archive__subcmd__flush_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help archive flush commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__archive__subcmd__import_commands] )) ||
_linerate__subcmd__help__subcmd__archive__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help archive import commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__bench_commands] )) ||
_linerate__subcmd__help__subcmd__bench_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help bench commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__compare_commands] )) ||
_linerate__subcmd__help__subcmd__compare_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help compare commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__completions_commands] )) ||
_linerate__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help completions commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__dashboard_commands] )) ||
_linerate__subcmd__help__subcmd__dashboard_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help dashboard commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__demo_commands] )) ||
_linerate__subcmd__help__subcmd__demo_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help demo commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__history_commands] )) ||
_linerate__subcmd__help__subcmd__history_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help history commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__incast_commands] )) ||
_linerate__subcmd__help__subcmd__incast_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help incast commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__job_commands] )) ||
_linerate__subcmd__help__subcmd__job_commands() {
    local commands; commands=(
'halo3d:Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember'\''s halo3d-26)' \
'all-to-all:Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)' \
    )
    _describe -t commands 'linerate help job commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__job__subcmd__all-to-all_commands] )) ||
_linerate__subcmd__help__subcmd__job__subcmd__all-to-all_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help job all-to-all commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__job__subcmd__halo3d_commands] )) ||
_linerate__subcmd__help__subcmd__job__subcmd__halo3d_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help job halo3d commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__keys_commands] )) ||
_linerate__subcmd__help__subcmd__keys_commands() {
    local commands; commands=(
'new:Make this user'\''s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon'\''s --authorized-keys file' \
'list:Print this user'\''s client key fingerprint, as a line for a daemon'\''s --authorized-keys file, and the daemons this user has met' \
    )
    _describe -t commands 'linerate help keys commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__keys__subcmd__list_commands] )) ||
_linerate__subcmd__help__subcmd__keys__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help keys list commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__keys__subcmd__new_commands] )) ||
_linerate__subcmd__help__subcmd__keys__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help keys new commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab_commands] )) ||
_linerate__subcmd__help__subcmd__lab_commands() {
    local commands; commands=(
'up:Create namespaces, links, addresses and routes, and set the conditions' \
'set:Change the conditions of a running lab' \
'status:Topology, backend, conditions and live emulator counters' \
'exec:Run a command inside a lab host (h1, h2, ...) or the router (r)' \
'addr:Print a host'\''s address, for scripts\: \`linerate bench \$(linerate lab addr h2)\`' \
'down:Remove everything a lab created; safe to repeat and after a crash' \
    )
    _describe -t commands 'linerate help lab commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__addr_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__addr_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab addr commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__down_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab down commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__exec_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__exec_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab exec commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__set_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__set_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab set commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__status_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__lab__subcmd__up_commands] )) ||
_linerate__subcmd__help__subcmd__lab__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help lab up commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__latency_commands] )) ||
_linerate__subcmd__help__subcmd__latency_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help latency commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__man_commands] )) ||
_linerate__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help man commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__mesh_commands] )) ||
_linerate__subcmd__help__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help mesh commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__recv_commands] )) ||
_linerate__subcmd__help__subcmd__recv_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help recv commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__report_commands] )) ||
_linerate__subcmd__help__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help report commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__schedule_commands] )) ||
_linerate__subcmd__help__subcmd__schedule_commands() {
    local commands; commands=(
'run:Follow a schedule file\: run each test at its interval, one throughput test a path at once' \
'check:Read a schedule file and say what is wrong with it, line by line' \
'status:Each schedule'\''s tests\: their next run, their last run and how it ended, their missed runs' \
    )
    _describe -t commands 'linerate help schedule commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__schedule__subcmd__check_commands] )) ||
_linerate__subcmd__help__subcmd__schedule__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help schedule check commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__schedule__subcmd__run_commands] )) ||
_linerate__subcmd__help__subcmd__schedule__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help schedule run commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__schedule__subcmd__status_commands] )) ||
_linerate__subcmd__help__subcmd__schedule__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help schedule status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__send_commands] )) ||
_linerate__subcmd__help__subcmd__send_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help send commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__serve_commands] )) ||
_linerate__subcmd__help__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help serve commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study_commands] )) ||
_linerate__subcmd__help__subcmd__study_commands() {
    local commands; commands=(
'wan:Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law' \
'lan:Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node' \
'tuning:One stream on a lab WAN before and after \`tune plan\`'\''s settings (applied, then reverted)' \
'interference:A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric\: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)' \
'striping:N parallel links between two hosts\: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)' \
    )
    _describe -t commands 'linerate help study commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study__subcmd__interference_commands] )) ||
_linerate__subcmd__help__subcmd__study__subcmd__interference_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help study interference commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study__subcmd__lan_commands] )) ||
_linerate__subcmd__help__subcmd__study__subcmd__lan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help study lan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study__subcmd__striping_commands] )) ||
_linerate__subcmd__help__subcmd__study__subcmd__striping_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help study striping commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study__subcmd__tuning_commands] )) ||
_linerate__subcmd__help__subcmd__study__subcmd__tuning_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help study tuning commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__study__subcmd__wan_commands] )) ||
_linerate__subcmd__help__subcmd__study__subcmd__wan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help study wan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune_commands] )) ||
_linerate__subcmd__help__subcmd__tune_commands() {
    local commands; commands=(
'audit:Read the settings that decide TCP throughput and judge them for a target' \
'plan:Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script' \
'apply:Apply a plan'\''s sysctls (or a built-in profile), saving the previous values (root)' \
'revert:Put back exactly what \`tune apply\` changed (root)' \
'capture:Copy every file the audit reads into DIR, as a fixture tree' \
    )
    _describe -t commands 'linerate help tune commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune__subcmd__apply_commands] )) ||
_linerate__subcmd__help__subcmd__tune__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help tune apply commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune__subcmd__audit_commands] )) ||
_linerate__subcmd__help__subcmd__tune__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help tune audit commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune__subcmd__capture_commands] )) ||
_linerate__subcmd__help__subcmd__tune__subcmd__capture_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help tune capture commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune__subcmd__plan_commands] )) ||
_linerate__subcmd__help__subcmd__tune__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help tune plan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__help__subcmd__tune__subcmd__revert_commands] )) ||
_linerate__subcmd__help__subcmd__tune__subcmd__revert_commands() {
    local commands; commands=()
    _describe -t commands 'linerate help tune revert commands' commands "$@"
}
(( $+functions[_linerate__subcmd__history_commands] )) ||
_linerate__subcmd__history_commands() {
    local commands; commands=()
    _describe -t commands 'linerate history commands' commands "$@"
}
(( $+functions[_linerate__subcmd__incast_commands] )) ||
_linerate__subcmd__incast_commands() {
    local commands; commands=()
    _describe -t commands 'linerate incast commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job_commands] )) ||
_linerate__subcmd__job_commands() {
    local commands; commands=(
'halo3d:Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember'\''s halo3d-26)' \
'all-to-all:Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate job commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__all-to-all_commands] )) ||
_linerate__subcmd__job__subcmd__all-to-all_commands() {
    local commands; commands=()
    _describe -t commands 'linerate job all-to-all commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__halo3d_commands] )) ||
_linerate__subcmd__job__subcmd__halo3d_commands() {
    local commands; commands=()
    _describe -t commands 'linerate job halo3d commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__help_commands] )) ||
_linerate__subcmd__job__subcmd__help_commands() {
    local commands; commands=(
'halo3d:Each rank exchanges faces, edges and corners with its 26 neighbours in a periodic 3D grid every iteration (bandwidth-heavy, as Ember'\''s halo3d-26)' \
'all-to-all:Each rank sends a small message to every other rank every iteration (latency-sensitive, as the FFT proxy subcom3d-a2a)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate job help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__help__subcmd__all-to-all_commands] )) ||
_linerate__subcmd__job__subcmd__help__subcmd__all-to-all_commands() {
    local commands; commands=()
    _describe -t commands 'linerate job help all-to-all commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__help__subcmd__halo3d_commands] )) ||
_linerate__subcmd__job__subcmd__help__subcmd__halo3d_commands() {
    local commands; commands=()
    _describe -t commands 'linerate job help halo3d commands' commands "$@"
}
(( $+functions[_linerate__subcmd__job__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__job__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate job help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys_commands] )) ||
_linerate__subcmd__keys_commands() {
    local commands; commands=(
'new:Make this user'\''s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon'\''s --authorized-keys file' \
'list:Print this user'\''s client key fingerprint, as a line for a daemon'\''s --authorized-keys file, and the daemons this user has met' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate keys commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__help_commands] )) ||
_linerate__subcmd__keys__subcmd__help_commands() {
    local commands; commands=(
'new:Make this user'\''s client key (a certificate and its private key, readable by the user only) and print its fingerprint, to add to a daemon'\''s --authorized-keys file' \
'list:Print this user'\''s client key fingerprint, as a line for a daemon'\''s --authorized-keys file, and the daemons this user has met' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate keys help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__keys__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate keys help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__help__subcmd__list_commands] )) ||
_linerate__subcmd__keys__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'linerate keys help list commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__help__subcmd__new_commands] )) ||
_linerate__subcmd__keys__subcmd__help__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'linerate keys help new commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__list_commands] )) ||
_linerate__subcmd__keys__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'linerate keys list commands' commands "$@"
}
(( $+functions[_linerate__subcmd__keys__subcmd__new_commands] )) ||
_linerate__subcmd__keys__subcmd__new_commands() {
    local commands; commands=()
    _describe -t commands 'linerate keys new commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab_commands] )) ||
_linerate__subcmd__lab_commands() {
    local commands; commands=(
'up:Create namespaces, links, addresses and routes, and set the conditions' \
'set:Change the conditions of a running lab' \
'status:Topology, backend, conditions and live emulator counters' \
'exec:Run a command inside a lab host (h1, h2, ...) or the router (r)' \
'addr:Print a host'\''s address, for scripts\: \`linerate bench \$(linerate lab addr h2)\`' \
'down:Remove everything a lab created; safe to repeat and after a crash' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate lab commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__addr_commands] )) ||
_linerate__subcmd__lab__subcmd__addr_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab addr commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__down_commands] )) ||
_linerate__subcmd__lab__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab down commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__exec_commands] )) ||
_linerate__subcmd__lab__subcmd__exec_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab exec commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help_commands] )) ||
_linerate__subcmd__lab__subcmd__help_commands() {
    local commands; commands=(
'up:Create namespaces, links, addresses and routes, and set the conditions' \
'set:Change the conditions of a running lab' \
'status:Topology, backend, conditions and live emulator counters' \
'exec:Run a command inside a lab host (h1, h2, ...) or the router (r)' \
'addr:Print a host'\''s address, for scripts\: \`linerate bench \$(linerate lab addr h2)\`' \
'down:Remove everything a lab created; safe to repeat and after a crash' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate lab help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__addr_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__addr_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help addr commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__down_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help down commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__exec_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__exec_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help exec commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__set_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__set_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help set commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__status_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__help__subcmd__up_commands] )) ||
_linerate__subcmd__lab__subcmd__help__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab help up commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__set_commands] )) ||
_linerate__subcmd__lab__subcmd__set_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab set commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__status_commands] )) ||
_linerate__subcmd__lab__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__lab__subcmd__up_commands] )) ||
_linerate__subcmd__lab__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'linerate lab up commands' commands "$@"
}
(( $+functions[_linerate__subcmd__latency_commands] )) ||
_linerate__subcmd__latency_commands() {
    local commands; commands=()
    _describe -t commands 'linerate latency commands' commands "$@"
}
(( $+functions[_linerate__subcmd__man_commands] )) ||
_linerate__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'linerate man commands' commands "$@"
}
(( $+functions[_linerate__subcmd__mesh_commands] )) ||
_linerate__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'linerate mesh commands' commands "$@"
}
(( $+functions[_linerate__subcmd__recv_commands] )) ||
_linerate__subcmd__recv_commands() {
    local commands; commands=()
    _describe -t commands 'linerate recv commands' commands "$@"
}
(( $+functions[_linerate__subcmd__report_commands] )) ||
_linerate__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'linerate report commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule_commands] )) ||
_linerate__subcmd__schedule_commands() {
    local commands; commands=(
'run:Follow a schedule file\: run each test at its interval, one throughput test a path at once' \
'check:Read a schedule file and say what is wrong with it, line by line' \
'status:Each schedule'\''s tests\: their next run, their last run and how it ended, their missed runs' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate schedule commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__check_commands] )) ||
_linerate__subcmd__schedule__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule check commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__help_commands] )) ||
_linerate__subcmd__schedule__subcmd__help_commands() {
    local commands; commands=(
'run:Follow a schedule file\: run each test at its interval, one throughput test a path at once' \
'check:Read a schedule file and say what is wrong with it, line by line' \
'status:Each schedule'\''s tests\: their next run, their last run and how it ended, their missed runs' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate schedule help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__help__subcmd__check_commands] )) ||
_linerate__subcmd__schedule__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule help check commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__schedule__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__help__subcmd__run_commands] )) ||
_linerate__subcmd__schedule__subcmd__help__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule help run commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__help__subcmd__status_commands] )) ||
_linerate__subcmd__schedule__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule help status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__run_commands] )) ||
_linerate__subcmd__schedule__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule run commands' commands "$@"
}
(( $+functions[_linerate__subcmd__schedule__subcmd__status_commands] )) ||
_linerate__subcmd__schedule__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'linerate schedule status commands' commands "$@"
}
(( $+functions[_linerate__subcmd__send_commands] )) ||
_linerate__subcmd__send_commands() {
    local commands; commands=()
    _describe -t commands 'linerate send commands' commands "$@"
}
(( $+functions[_linerate__subcmd__serve_commands] )) ||
_linerate__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'linerate serve commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study_commands] )) ||
_linerate__subcmd__study_commands() {
    local commands; commands=(
'wan:Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law' \
'lan:Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node' \
'tuning:One stream on a lab WAN before and after \`tune plan\`'\''s settings (applied, then reverted)' \
'interference:A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric\: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)' \
'striping:N parallel links between two hosts\: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate study commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help_commands] )) ||
_linerate__subcmd__study__subcmd__help_commands() {
    local commands; commands=(
'wan:Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law' \
'lan:Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node' \
'tuning:One stream on a lab WAN before and after \`tune plan\`'\''s settings (applied, then reverted)' \
'interference:A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a leaf-spine fabric\: alone, together without classes, with ETS 50/50, with strict priority, with PFC on the bandwidth class (seed 002, section VIII)' \
'striping:N parallel links between two hosts\: one link alone, the N bonded (a hash per flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory to memory and a file transfer (seeds 000 and 004)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate study help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__interference_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__interference_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help interference commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__lan_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__lan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help lan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__striping_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__striping_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help striping commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__tuning_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__tuning_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help tuning commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__help__subcmd__wan_commands] )) ||
_linerate__subcmd__study__subcmd__help__subcmd__wan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study help wan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__interference_commands] )) ||
_linerate__subcmd__study__subcmd__interference_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study interference commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__lan_commands] )) ||
_linerate__subcmd__study__subcmd__lan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study lan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__striping_commands] )) ||
_linerate__subcmd__study__subcmd__striping_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study striping commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__tuning_commands] )) ||
_linerate__subcmd__study__subcmd__tuning_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study tuning commands' commands "$@"
}
(( $+functions[_linerate__subcmd__study__subcmd__wan_commands] )) ||
_linerate__subcmd__study__subcmd__wan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate study wan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune_commands] )) ||
_linerate__subcmd__tune_commands() {
    local commands; commands=(
'audit:Read the settings that decide TCP throughput and judge them for a target' \
'plan:Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script' \
'apply:Apply a plan'\''s sysctls (or a built-in profile), saving the previous values (root)' \
'revert:Put back exactly what \`tune apply\` changed (root)' \
'capture:Copy every file the audit reads into DIR, as a fixture tree' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate tune commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__apply_commands] )) ||
_linerate__subcmd__tune__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune apply commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__audit_commands] )) ||
_linerate__subcmd__tune__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune audit commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__capture_commands] )) ||
_linerate__subcmd__tune__subcmd__capture_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune capture commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help_commands] )) ||
_linerate__subcmd__tune__subcmd__help_commands() {
    local commands; commands=(
'audit:Read the settings that decide TCP throughput and judge them for a target' \
'plan:Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script' \
'apply:Apply a plan'\''s sysctls (or a built-in profile), saving the previous values (root)' \
'revert:Put back exactly what \`tune apply\` changed (root)' \
'capture:Copy every file the audit reads into DIR, as a fixture tree' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'linerate tune help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__apply_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help apply commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__audit_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__audit_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help audit commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__capture_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__capture_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help capture commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__help_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help help commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__plan_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help plan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__help__subcmd__revert_commands] )) ||
_linerate__subcmd__tune__subcmd__help__subcmd__revert_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune help revert commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__plan_commands] )) ||
_linerate__subcmd__tune__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune plan commands' commands "$@"
}
(( $+functions[_linerate__subcmd__tune__subcmd__revert_commands] )) ||
_linerate__subcmd__tune__subcmd__revert_commands() {
    local commands; commands=()
    _describe -t commands 'linerate tune revert commands' commands "$@"
}

if [ "$funcstack[1]" = "_linerate" ]; then
    _linerate "$@"
else
    compdef _linerate linerate
fi
