#!/usr/bin/env python3
"""tests/fuzz/make_seeds.py: writes the hand-made seeds of the targets whose inputs are small (run once by hand, the
output is committed: `tests/fuzz/make_seeds.py tests/fuzz/corpus`). The generated firmware and discovery seeds come
from gen_corpus.c; the code-object and cubin seeds are real files (README.md says where from)."""
import hashlib
import os
import struct
import sys


def put(root, target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def kcache_entry(payload):
    # compile/kcache.c: payload, then "BGKC\x01\0\0\0", le64 payload size, SHA-256 of the payload.
    return payload + b"BGKC\x01\0\0\0" + struct.pack("<Q", len(payload)) + hashlib.sha256(payload).digest()


def cpl(value=0, status=0, ret=0):
    # usb/asm24_proto.c bg_asm24_cpl_decode: value in bytes 0-3, status in byte 4 bits 5-7, return byte 7.
    return struct.pack("<I", value) + bytes([status << 5, 0, 0, ret])


def gsp_msg(function, payload, seq=0, elems=None, result=0):
    # A GSP status-queue message (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP; nouveau r535.c struct r535_gsp_msg + nvfw_gsp_rpc): 0x30-byte element
    # header {checksum @32, seqNum @36, elemCount @40}, rpc header {0x03000000, "VRPC", length, function, result x2},
    # payload; checksum = XOR of the u64 words of header + rpc.length bytes (zero-padded), folded hi ^ lo.
    length = 0x20 + len(payload)
    count = elems or (0x30 + length + 0xfff) // 0x1000
    body = struct.pack("<IIIIIIII", 0x03000000, 0x43505256, length, function, result, result, 0, 0) + payload
    msg = bytearray(bytes(32) + struct.pack("<IIII", 0, seq, count, 0) + body)
    msg += bytes(-len(msg) % 8)
    s = 0
    for i in range(0, len(msg), 8):
        s ^= struct.unpack_from("<Q", msg, i)[0]
    struct.pack_into("<I", msg, 32, (s >> 32) ^ (s & 0xffffffff))
    return bytes(msg) + bytes(count * 0x1000 - len(msg))


def gsp_queue(rptr, wptr, elements):
    # fuzz_nv_gsp.c queue mode: byte 0 even, host read pointer, status queue header page (writePtr @16), elements
    # from the read pointer on
    hdr = struct.pack("<IIIIIIII", 0, 0x40000, 0x1000, 63, wptr, 0, 32, 0x1000) + bytes(0x1000 - 32)
    return bytes([0, rptr]) + hdr + elements


def gsp_seq(cmds, ndw=None):
    # rpc_run_cpu_sequencer_v17_00: bufferSizeDWord, cmdIndex, regSaveArea[8], commands (fuzz_nv_gsp.c: byte 0 odd)
    n = len(cmds) if ndw is None else ndw
    return struct.pack("<II", len(cmds), n) + bytes(32) + struct.pack("<%dI" % len(cmds), *cmds)


def main(root):
    # kernel cache: mode byte (fuzz_kcache.c: odd = raw entry file, even = payload stored then loaded)
    so = b"\x7fELF\x02\x01\x01" + bytes(57) + b"kernel body"
    put(root, "fuzz_kcache", "entry-valid", b"\x01" + kcache_entry(so))
    put(root, "fuzz_kcache", "entry-bad-sum", b"\x01" + kcache_entry(so)[:-1] + b"\x00")
    put(root, "fuzz_kcache", "entry-short", b"\x01BGKC\x01")
    put(root, "fuzz_kcache", "roundtrip", b"\x00" + so)
    put(root, "fuzz_kcache", "roundtrip-empty", b"\x00")
    # BEAM cache payloads (compile/beam.c opts_str)
    put(root, "fuzz_beam_cache", "opts", "u 4 1 1 1 1 1 1 1 r 2\n")
    put(root, "fuzz_beam_cache", "opts-max", "u 64 64 1 1 1 1 1 1 r 32\n")
    put(root, "fuzz_beam_cache", "opts-zero", "u 0 1 1 1 1 1 1 1 r 1\n")
    put(root, "fuzz_beam_cache", "opts-big", "u 4294967297 1 1 1 1 1 1 1 r 99999999999\n")
    # DEV strings (include/baregpu/hcq.h)
    for i, s in enumerate(["AMD", "CPU", "AMD:1", "PCI+AMD", "USB:0,2+AMD:1", "MOCKPCI:1-3+amd:2", "NV",
                           "NVK+NV:0", "PCI:0-15,17+AMD:3", "AMD:", "+AMD", "PCI:3-1+AMD", "AMD:99999999999"]):
        put(root, "fuzz_dev_string", "dev-%02d" % i, s)
    bars = b"".join(cpl(v) for v in [0x12345678, 0xffff, 0, 0, 0, 0, 0, 0, 0, 0, 0xfff0000c, 0xffffffff,
                                      0xfffe0000, 0, 0xfff00001, 0, 0, 0, 0, 0x00010015, 0x00fff000, 0])
    # ASM24 replies (fuzz_usb_reply.c): byte 0 = 0 to open the bridge from the script (LTSSM byte first), else the
    # requests on a bridge already open; then completions / XDATA bytes / bulk data as the bridge would send them
    up = bytes([0, 0x78])
    put(root, "fuzz_usb_reply", "link-up-zeros", up + cpl() * 40 + bytes(64))
    put(root, "fuzz_usb_reply", "link-down-powerup", bytes([0, 0x00, 0x78]) + cpl(0x744c1002) * 40 + bytes(64))
    put(root, "fuzz_usb_reply", "link-never-up", bytes([0, 0x00, 0x11]))
    put(root, "fuzz_usb_reply", "open-bars", bytes([1]) + bars + cpl() * 30 + bytes(64))
    put(root, "fuzz_usb_reply", "bars", up + bars + cpl() * 30 + bytes(64))
    put(root, "fuzz_usb_reply", "crs-ur-fwerr", up + cpl(status=2) * 3 + cpl(status=1) + cpl(ret=1) * 2 +
        cpl(0xdeadbeef) * 40 + bytes(40))
    # sysfs resource files (Linux resource_show) and addresses
    res = ("0x00000000e0000000 0x00000000efffffff 0x000000000014220c\n"
           "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
           "0x00000000f0000000 0x00000000f01fffff 0x000000000014220c\n"
           "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
           "0x000000000000e000 0x000000000000e0ff 0x0000000000040101\n"
           "0x00000000fcd00000 0x00000000fcd7ffff 0x0000000000040200\n"
           "0x00000000fcd80000 0x00000000fcd9ffff 0x0000000000046200\n")
    put(root, "fuzz_sysfs", "resource-amd", res)
    put(root, "fuzz_sysfs", "resource-short", "0x1000 0x0fff 0x200\n0x")
    put(root, "fuzz_sysfs", "bdf", "0000:03:00.0")
    put(root, "fuzz_sysfs", "bdf-bad", "0000:03:00.9\n")
    # pagemap entries: present bit 63, PFN in bits 0-54
    pm = lambda pfn, present=True: struct.pack("<Q", (1 << 63 if present else 0) | pfn)
    put(root, "fuzz_pagemap", "contiguous", b"".join(pm(0x12340 + i) for i in range(8)))
    put(root, "fuzz_pagemap", "not-present", pm(0x100) + pm(0x101, False))
    put(root, "fuzz_pagemap", "frame-zero", pm(0))
    put(root, "fuzz_pagemap", "short", pm(0x100) + b"\x01\x02\x03")
    # Found by fuzz_pagemap: a present entry with PFN 1 << 52 made bus address 0 (PFN * 4096 wrapped).
    put(root, "fuzz_pagemap", "pfn-wraps", pm(1 << 52))
    # lock files: the owner's pid as text
    for name, s in [("pid", "12345\n"), ("empty", ""), ("garbage", "pid=12"), ("huge", "99999999999999999999"),
                    ("negative", "-5"), ("spaces", "   42  ")]:
        put(root, "fuzz_lock", name, s)
    # IH ring: WPTR, RPTR register values, then 8-dword entries
    ent = lambda client, src, ring=0, vmid=0, pasid=0: struct.pack("<8I", client | src << 8 | ring << 16 | vmid << 24,
                                                                   0, 0, pasid, 1, 2, 3, 4)
    ring = ent(0x1b, 0) + ent(0x0a, 0xef, 1, 3, 7) + ent(0x08, 0xe0)
    put(root, "fuzz_ih", "three-entries", struct.pack("<II", 3 * 32, 0) + ring)
    put(root, "fuzz_ih", "wrapped", struct.pack("<II", 32, 0x3ffe0 << 0) + ring)
    put(root, "fuzz_ih", "overflow-bit", struct.pack("<II", 2 * 32 | 1, 32) + ring)
    # The regression input of the IH walk: a WPTR off the 8-dword grid made bg_am_ih_drain step past it forever.
    put(root, "fuzz_ih", "wptr-off-grid", struct.pack("<II", 4, 0) + ring)
    # SMU metrics tables: layout byte then the table (zeros with a few fields set), and a short one
    for layout, size in [(0, 392), (1, 412), (2, 2008)]:
        t = bytearray(size)
        struct.pack_into("<I", t, 0, 1000 + layout)
        t[size // 2] = 0x55
        put(root, "fuzz_smu_metrics", "layout-%d" % layout, bytes([layout]) + bytes(t))
    put(root, "fuzz_smu_metrics", "short", bytes([0]) + bytes(100))
    put(root, "fuzz_smu_metrics", "unknown-layout", bytes([3]) + bytes(2008))
    # GSP status queue and CPU sequencer (fuzz_nv_gsp.c)
    every_op = [0, 0x10, 0xcafe, 1, 0x20, 0xff, 0x12, 2, 0x40, 0, 0, 100, 0, 3, 5, 4, 0x30, 7, 5, 6, 7, 8]
    put(root, "fuzz_nv_gsp", "seq-every-opcode", b"\x01" + gsp_seq(every_op))
    put(root, "fuzz_nv_gsp", "seq-poll-timeout", b"\x01" + gsp_seq([2, 0x40, 1, 1, 50, 0]))
    put(root, "fuzz_nv_gsp", "seq-unknown-opcode", b"\x01" + gsp_seq([0, 0x10, 1, 9]))
    put(root, "fuzz_nv_gsp", "seq-save-range", b"\x01" + gsp_seq([4, 0x30, 8]))
    put(root, "fuzz_nv_gsp", "seq-truncated", b"\x01" + gsp_seq([0, 0x10, 1, 2, 0x40], ndw=9))
    two = gsp_msg(0x1001, bytes(8), 0) + gsp_msg(0x1002, gsp_seq(every_op), 1)
    put(root, "fuzz_nv_gsp", "queue-init-done-sequencer", gsp_queue(0, 2, two))
    put(root, "fuzz_nv_gsp", "queue-wrapped", gsp_queue(62, 1, gsp_msg(76, bytes(range(256)) * 16, 0)))
    put(root, "fuzz_nv_gsp", "queue-elemcount-2", gsp_queue(0, 3, gsp_msg(76, bytes(0xfc0), 0) + gsp_msg(72, b"ab", 1)))
    put(root, "fuzz_nv_gsp", "queue-os-error-log",
        gsp_queue(0, 1, gsp_msg(0x1006, struct.pack("<III", 31, 0, 0) + b"Xid 31: MMU fault\0", 0)))
    put(root, "fuzz_nv_gsp", "queue-mmu-fault", gsp_queue(0, 1, gsp_msg(0x1005, bytes(16), 0)))
    bad = bytearray(gsp_msg(103, bytes(64), 0))
    bad[0x60] ^= 1
    put(root, "fuzz_nv_gsp", "queue-bad-checksum", gsp_queue(0, 1, bytes(bad)))
    put(root, "fuzz_nv_gsp", "queue-big-reply", gsp_queue(0, 2, gsp_msg(103, bytes(0x1000), 0, result=0x22)))
    # safetensors files (tensor/safetensors.c): le64 header length, JSON header padded with spaces, data
    def st(header, data=b""):
        h = header.encode()
        h += b" " * (-len(h) % 8)
        return struct.pack("<Q", len(h)) + h + data
    put(root, "fuzz_safetensors", "two-tensors",
        st('{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},'
           '"b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}}', bytes(22)))
    dts = [("F64", 8), ("F32", 4), ("F16", 2), ("BF16", 2), ("I64", 8), ("I32", 4), ("I16", 2), ("I8", 1), ("U8", 1),
           ("BOOL", 1), ("U16", 2), ("U32", 4), ("U64", 8)]
    ents, at = [], 0
    for i, (name, size) in enumerate(dts):
        ents.append('"t%d":{"dtype":"%s","shape":[%d],"data_offsets":[%d,%d]}' % (i, name, i % 3, at, at + size * (i % 3)))
        at += size * (i % 3)
    put(root, "fuzz_safetensors", "every-dtype", st("{" + ",".join(ents) + "}", bytes(at)))
    put(root, "fuzz_safetensors", "empty", st("{}"))
    put(root, "fuzz_safetensors", "scalar-escapes",
        st('{"\\u00e9\\ud83d\\ude00\\n":{"shape":[],"dtype":"I64","data_offsets":[0,8]}}', bytes(8)))
    put(root, "fuzz_safetensors", "overlap",
        st('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}',
           bytes(4)))
    put(root, "fuzz_safetensors", "bad-dtype", st('{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}', b"x"))
    put(root, "fuzz_safetensors", "truncated-json", st('{"a":{"dtype":"F32","shape":[1'))
    put(root, "fuzz_safetensors", "length-beyond", struct.pack("<Q", 1 << 40) + b"{}")
    nv_seeds(root)


def nv_elf(sections):
    # ELF64 LE container (System V gABI): header, section data, .shstrtab, then the section headers (index 0 null).
    names, data, hdrs = b"\0", b"", []
    for name, payload in sections + [(".shstrtab", None)]:
        off = len(names)
        names += name.encode() + b"\0"
        hdrs.append((off, name, payload))
    body, recs = b"", [bytes(64)]
    for off, name, payload in hdrs:
        if payload is None:
            payload, typ = names, 3
        else:
            typ = 1
        recs.append(struct.pack("<IIQQQQIIQQ", off, typ, 0, 0, 64 + len(body), len(payload), 0, 0, 1, 0))
        body += payload
    shoff = 64 + len(body)
    ehdr = (b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 1, 0, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                                                                len(recs), len(recs) - 1))
    return ehdr + body + b"".join(recs)


def nv_seeds(root):
    # NVIDIA firmware (nv/nv_fw.h). fuzz_nv_fw: byte 0 = chip index in nv/nv_chips.c's table (0 GA102, 5 GH100,
    # 6 AD102, 11 GB202), then the file. Booter: nvfw_bin_hdr + nvfw_hs_header_v2 (patch_loc, patch_sig, num_sig are
    # file offsets of their u32 values) + nvfw_hs_load_header_v2 (nouveau include/nvfw/fw.h, hs.h).
    hs = struct.pack("<9I", 0x100, 0x100, 0x80, 0x84, 0x90, 12, 0x88, 0xa0, 28)
    booter = bytearray(0x600)
    booter[0:24] = struct.pack("<6I", 0x10de, 1, 0x600, 0x40, 0x200, 0x400)
    booter[0x40:0x40 + len(hs)] = hs
    booter[0x80:0x8c] = struct.pack("<3I", 0x300, 0, 2)
    booter[0xa0:0xbc] = struct.pack("<7I", 0, 0x100, 0x100, 0x80, 1, 0x200, 0x180)
    booter[0x100:0x200] = b"\x11" * 0x80 + b"\x22" * 0x80
    put(root, "fuzz_nv_fw", "booter", b"\x00" + bytes(booter))
    # bootloader: nvfw_bin_hdr + RM_RISCV_UCODE_DESC (84 B; manifestOffset @32, monitorDataOffset @40,
    # monitorCodeOffset @48: nouveau include/nvrm/535.113.01/.../rmRiscvUcode.h)
    bl = bytearray(0x180)
    bl[0:24] = struct.pack("<6I", 0x10de, 1, 0x180, 0x20, 0x80, 0x100)
    bl[0x20:0x20 + 84] = struct.pack("<21I", 4, 0, 0, 0, 0, 0, 0, 0, 0x10, 8, 0x20, 0x10, 0x40, 0x80, 1, 0, 0, 0, 0, 0, 0)
    put(root, "fuzz_nv_fw", "bootloader", b"\x00" + bytes(bl))
    img = bytes(i * 13 & 0xff for i in range(0x400))
    gsp = nv_elf([(".fwimage", img), (".fwsignature_ga10x", b"\x6a" * 0x100), (".fwsignature_ad10x", b"\xad" * 0x100),
                  (".fwsignature_gh10x", b"\x68" * 0x100), (".fwsignature_gb20x", b"\x6b" * 0x100)])
    for idx, chip in ((0, "ga102"), (5, "gh100"), (6, "ad102"), (11, "gb202")):
        put(root, "fuzz_nv_fw", "gsp-elf-" + chip, bytes([idx]) + gsp)
    put(root, "fuzz_nv_fw", "gsp-elf-mismatched", b"\x06" + nv_elf([(".fwimage", img), (".fwsignature_gb20x", b"\x6b" * 64)]))
    fmc = nv_elf([("image", img), ("hash", b"\x48" * 48), ("signature", b"\x53" * 384), ("publickey", b"\x4b" * 381)])
    put(root, "fuzz_nv_fw", "fmc", b"\x0b" + fmc)
    # VBIOS: base image, an EFI image whose NPDE gives its length, the 0xE0 image with the falcon ucode table and
    # FWSEC_PROD (FALCON_UCODE_DESC_V3, 3 signatures, SignatureVersions bits 2, 5, 6), BIT at 0x1b0 with
    # FALCON_DATA v2 (nouveau nvkm/subdev/bios/{image,pcir,npde,bit,pmu}.c, nvkm/subdev/gsp/fwsec.c).
    rom = bytearray(0x1800)
    def pci(at, units, typ, last):
        rom[at:at + 2] = b"\x55\xaa"
        rom[at + 0x18:at + 0x1a] = struct.pack("<H", 0x20)
        p = at + 0x20
        rom[p:p + 0x16] = b"PCIR" + struct.pack("<HHHHBBBBHHBB", 0x10de, 0, 0, 0x18, 0, 0, 0, 0, units, 0, typ,
                                                 0x80 if last else 0)
    pci(0, 2, 0, False)
    pci(0x400, 1, 3, False)
    rom[0x440:0x44b] = b"NPDE" + struct.pack("<HHHB", 0x100, 0, 2, 0)
    pci(0x800, 8, 0xe0, True)
    rom[0x1b0:0x1c0] = b"\xff\xb8BIT\x00" + struct.pack("<HBBBB", 0x100, 12, 6, 2, 0) + bytes(4)
    rom[0x1bc:0x1c8] = struct.pack("<BBHH", 0x69, 1, 4, 0x300) + struct.pack("<BBHH", 0x70, 2, 4, 0x200)
    rom[0x200:0x204] = struct.pack("<I", 0x500)
    rom[0x900:0x912] = bytes([1, 6, 6, 2, 3, 44]) + struct.pack("<BBI", 0x45, 0, 0xdead) + struct.pack("<BBI", 0x85, 0, 0x600)
    dsize = 44 + 3 * 384
    rom[0xa00:0xa2c] = struct.pack("<9IHBBHH", 1 | 3 << 8 | dsize << 16, 0x600, 0x200, 0x10, 0x11, 0x200, 0x22, 0x33,
                                   0x400, 4, 9, 3, 0x64, 0)
    for i in range(3):
        rom[0xa2c + i * 384:0xa2c + (i + 1) * 384] = bytes([0xa0 + i]) * 384
    image = 0xa00 + dsize
    dm = image + 0x200
    rom[dm + 0x10:dm + 0x24] = bytes([1, 4, 8, 2]) + struct.pack("<4I", 1, 0x80, 4, 0x40)
    rom[dm + 0x48:dm + 0x4c] = struct.pack("<I", 0x100)
    put(root, "fuzz_nv_vbios", "rom", bytes(rom))
    put(root, "fuzz_nv_vbios", "rom-cut", bytes(rom[:image + 0x100]))
    bad = bytearray(rom)
    bad[dm + 0x10] = 2
    put(root, "fuzz_nv_vbios", "rom-bad-interface", bytes(bad))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py CORPUS_DIR")
    main(sys.argv[1])
