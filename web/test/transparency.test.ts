// Every vector of docs/transparency-vectors.json but `receipts`, from docs/transparency.md alone.
import { describe, expect, it } from "vitest";
import { hex, unhex } from "../src/bytes";
import { checkReceipt } from "../src/receipts";
import * as T from "../src/transparency";
import { list, load } from "./vectors";

const V = load("transparency-vectors.json");
const hashes = (xs: string[]) => xs.map(unhex);

describe("hashing (§3)", () => {
  it("empty root, a leaf, a node", async () => {
    expect(hex(await T.treeRoot([]))).toBe(V.hashing.empty_root);
    expect(hex(await T.leafHash(unhex(V.hashing.leaf.leaf)))).toBe(V.hashing.leaf.leaf_hash);
    const { left, right, node_hash } = V.hashing.node;
    expect(hex(await T.nodeHash(unhex(left), unhex(right)))).toBe(node_hash);
  });
  it("leaf hashes and every root", async () => {
    const leafHashes = await Promise.all(hashes(V.leaves).map(T.leafHash));
    expect(leafHashes.map(hex)).toEqual(V.leaf_hashes);
    for (const { size, root } of V.roots) expect(hex(await T.treeRoot(leafHashes.slice(0, size)))).toBe(root);
  });
});

describe("inclusion (§4.1)", () => {
  it.each(list(V.inclusion))("leaf $index of $size", async (v) => {
    const leafHashes = hashes(V.leaf_hashes).slice(0, v.size);
    expect((await T.inclusionProof(v.index, leafHashes)).map(hex)).toEqual(v.proof);
    expect(await T.verifyInclusion(v.index, v.size, unhex(v.leaf_hash), hashes(v.proof), unhex(v.root))).toBe(true);
  });
});

describe("consistency (§4.2)", () => {
  it.each(list(V.consistency))("$old_size -> $new_size", async (v) => {
    const ok = await T.verifyConsistency(v.old_size, v.new_size, hashes(v.proof), unhex(v.old_root), unhex(v.new_root));
    expect(ok).toBe(true);
  });
});

describe("refused proofs", () => {
  it.each(list(V.refused))("$kind: $why", async (v) => {
    const ok =
      v.kind === "inclusion"
        ? await T.verifyInclusion(v.index, v.size, unhex(v.leaf_hash), hashes(v.proof), unhex(v.root))
        : await T.verifyConsistency(v.old_size, v.new_size, hashes(v.proof), unhex(v.old_root), unhex(v.new_root));
    expect(ok).toBe(false);
  });
});

describe("checkpoint and signed note (§5)", () => {
  const c = V.checkpoint;
  it("the body", () => {
    const cp = T.parseCheckpoint(c.text);
    expect([cp.origin, cp.size, hex(cp.root), cp.time]).toEqual([c.origin, c.size, c.root, c.time]);
  });
  it("the server's signed note, reproduced and opened", async () => {
    const server = await T.parseVerifierKey(c.server_vkey);
    expect(hex(server.keyId)).toBe(c.server_key_id);
    const skey = await T.parseSigningKey(c.server_skey);
    expect(await T.signNote(c.text, skey.name, skey.seed, server.keyId)).toBe(c.signed_note);
    expect(await T.openNote(c.signed_note, [server])).toEqual({ text: c.text, signers: [c.origin], verified: [server] });
    const forged = c.signed_note.replace("\n11\n", "\n12\n");
    await expect(T.openNote(forged, [server])).rejects.toThrow("does not verify");
  });
  it("the witness's cosignature, reproduced and opened", async () => {
    const server = await T.parseVerifierKey(c.server_vkey);
    const witness = await T.parseVerifierKey(c.witness_vkey);
    expect(hex(witness.keyId)).toBe(c.witness_key_id);
    const wkey = await T.parseSigningKey(c.witness_skey);
    const line = await T.cosignLine(c.text, wkey.name, wkey.seed, witness.keyId, c.cosignature_time);
    expect(line).toBe(V.cosignature.line);
    expect(new TextDecoder().decode(T.cosignedMessage(BigInt(c.cosignature_time), c.text))).toBe(V.cosignature.message);
    expect(c.cosigned_note).toBe(`${c.signed_note}${line}\n`);
    const opened = await T.openNote(c.cosigned_note, [server, witness]);
    expect(opened.signers).toEqual([c.origin, witness.name]);
    expect(await T.openNote(c.cosigned_note, [witness])).toEqual({ text: c.text, signers: [witness.name], verified: [witness] });
  });
  it.each(list(V.cosignature.refused))("refuses $why", async (v) => {
    const witness = await T.parseVerifierKey(V.cosignature.witness_vkey);
    expect(await T.verifyLine(v.text, v.line, witness)).toBe(false);
  });
});

describe("receipts (§9)", () => {
  const r = V.receipts;
  it("the receipt text, parsed and opened", async () => {
    const receipt = await checkReceipt(r.signed_note, [r.server_vkey]);
    expect(receipt).toEqual({ log: r.log, stream: r.stream, requestId: r.request_id, time: r.time, events: r.events });
    const { text } = await T.openNote(r.signed_note, [await T.parseVerifierKey(r.server_vkey)]);
    expect(text).toBe(r.text);
  });
  it.each(list(r.refused))("refuses $why", async (v) => {
    await expect(checkReceipt(v.note, [r.server_vkey])).rejects.toThrow();
  });
});
