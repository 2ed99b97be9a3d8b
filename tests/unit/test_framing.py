from lore_sidecar.rpc.framing import MAX_BODY, Frame, FrameParser, Skipped, encode

REQ = encode(b'{"jsonrpc":"2.0","id":1,"method":"x"}')


def test_back_to_back_frames_without_separators_all_parse():
    assert [type(e) for e in FrameParser().feed(REQ * 3)] == [Frame, Frame, Frame]


def test_a_frame_split_byte_by_byte_still_parses():
    p = FrameParser()
    events = [e for b in REQ for e in p.feed(bytes([b]))]
    assert events == [Frame(REQ.split(b"\r\n\r\n", 1)[1])]


def test_bad_header_does_not_swallow_the_next_frame_and_reports_the_request_id():
    bad = b'Content-Lenght: 40\r\n\r\n{"jsonrpc":"2.0","id":"x1","method":"m"}'
    events = FrameParser().feed(bad + REQ)
    assert events[0] == Skipped("header block without Content-Length", "x1")
    assert isinstance(events[1], Frame)


def test_huge_content_length_is_refused_without_reading_it():
    events = FrameParser().feed(b"Content-Length: 1000000000000\r\n\r\n" + b'{"id":7,"method":"m"}' + REQ)
    assert isinstance(events[0], Skipped) and "exceeds" in events[0].reason and events[0].request_id == 7
    assert isinstance(events[1], Frame)


def test_content_length_just_over_the_cap_is_refused_and_at_the_cap_is_accepted():
    p = FrameParser(max_body=10)
    events = p.feed(b"Content-Length: 11\r\n\r\n01234567890") + p.finish()
    assert len(events) == 1 and "exceeds" in events[0].reason
    p = FrameParser(max_body=10)
    assert p.feed(b"Content-Length: 10\r\n\r\n0123456789") == [Frame(b"0123456789")]
    assert MAX_BODY >= 1 << 20


def test_body_shorter_than_declared_resynchronises_on_the_next_header():
    short = b'Content-Length: 60\r\n\r\n{"jsonrpc":"2.0","id":9,"method":"m"}'
    events = FrameParser().feed(short + REQ)
    assert events[0] == Skipped("body shorter than its Content-Length", 9)
    assert isinstance(events[1], Frame)


def test_unparsable_body_of_the_right_length_is_handed_on_for_a_parse_error():
    assert FrameParser().feed(encode(b"{nope")) == [Frame(b"{nope")]


def test_extra_headers_are_accepted_and_junk_before_a_frame_is_reported():
    with_type = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + REQ
    assert [type(e) for e in FrameParser().feed(with_type)] == [Frame]
    events = FrameParser().feed(b"hello world\r\n" + REQ)
    assert [type(e) for e in events] == [Skipped, Frame]


def test_truncated_input_at_end_is_reported_once():
    p = FrameParser()
    assert p.feed(REQ[:-3]) == []
    assert len(p.finish()) == 1
    assert FrameParser().finish() == []


def test_junk_fed_read_by_read_is_searched_once_and_a_marker_split_across_reads_is_found(monkeypatch):
    """Resynchronising reads each byte of junk about once, not the whole buffer at every read
    (rev9: quadratic, 4 MB of junk in 4 KB reads kept the reader busy 12 s); a marker split
    across two reads, in any case, is still found, and the frame after the junk parses."""
    from lore_sidecar.rpc import framing

    searched: list[int] = []
    real = framing._find_mark

    def counting(buf, start=0):
        searched.append(len(buf) - start)
        return real(buf, start)

    monkeypatch.setattr(framing, "_find_mark", counting)
    p = FrameParser()
    assert p.feed(b"not a header line\n") == []
    fed = 0
    for _ in range(256):
        chunk = b"x" * 4096
        assert p.feed(chunk) == []
        fed += len(chunk)
    assert sum(searched) <= 2 * fed + 4096, (sum(searched), fed)  # linear; quadratic was ~128x
    frame = encode(b'{"jsonrpc":"2.0","id":7,"method":"lore/status"}')
    head = b"cOnTeNt-LeNgTh"  # the marker cut after its 14th byte, in mixed case
    assert p.feed(frame[:7].swapcase() + head[7:14]) == []
    out = p.feed(frame[14:])
    assert [type(e) for e in out] == [Skipped, Frame] and out[1].body == frame.split(b"\r\n\r\n", 1)[1]


def test_control_junk_then_a_whole_frame_in_one_read():
    p = FrameParser()
    out = p.feed(b"junk\n" + b"y" * 10_000 + encode(b'{"jsonrpc":"2.0","id":1,"method":"x"}'))
    assert [type(e) for e in out] == [Skipped, Frame]
