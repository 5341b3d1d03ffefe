import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { errorInfoReason } from "../src/api/errors";
import { seatParts } from "../src/api/moves";
import { newKeyPair } from "../src/api/session";
import { utf8 } from "../src/bytes";
import { ed25519Sign, ed25519Verify } from "../src/crypto";
import { registrationMessage } from "../src/fairness";
import { DealResultSchema, PairResultSchema, RowOutcome } from "../src/gen/sapsam/v1/table_pb";
import { RegisterPlayerKeyRequestSchema } from "../src/gen/sapsam/v1/player_service_pb";
import { rowOutcome } from "../src/table/results";

describe("api", () => {
  it("reads ErrorInfo's reason from its wire bytes", () => {
    // ErrorInfo{reason: "WRONG_PHASE", domain: "sapsam.dev"}: field 1 and field 2, both strings
    const text = new TextEncoder();
    const reason = text.encode("WRONG_PHASE");
    const domain = text.encode("sapsam.dev");
    const bytes = Uint8Array.from([0x12, domain.length, ...domain, 0x0a, reason.length, ...reason]);
    expect(errorInfoReason(bytes)).toBe("WRONG_PHASE");
    expect(errorInfoReason(new Uint8Array())).toBe("");
  });
  it("makes an Ed25519 key pair whose secret half signs what the public half verifies", async () => {
    const [secret, pub] = await newKeyPair();
    expect([secret.length, pub.length]).toEqual([32, 32]);
    const message = registrationMessage("player-id", pub);
    const signature = await ed25519Sign(secret, message);
    expect(await ed25519Verify(pub, signature, message)).toBe(true);
    expect(await ed25519Verify(pub, signature, utf8("another message"))).toBe(false);
  });
  it("splits a seat's name", () => {
    const id = "0b6f3c0e-8a0e-4c57-9a43-6f1f0d6c2a11";
    expect(seatParts(`tables/${id}/seats/3`)).toEqual({ table: `tables/${id}`, tableId: id, position: 3 });
    expect(() => seatParts("tables/x/seats/1")).toThrow();
  });
  it("encodes requests with the generated messages", () => {
    const request = create(RegisterPlayerKeyRequestSchema, { requestId: "r", publicKey: new Uint8Array(32) });
    expect(toBinary(RegisterPlayerKeyRequestSchema, request).length).toBe(3 + 2 + 32);
  });
});

describe("table/results", () => {
  it("tells each row won, lost or tied from either seat", () => {
    const result = create(DealResultSchema, {
      pairs: [create(PairResultSchema, { firstSeat: "a", secondSeat: "b", front: RowOutcome.FIRST_SEAT_WON, middle: RowOutcome.SECOND_SEAT_WON, back: RowOutcome.TIE })],
    });
    expect(["front", "middle", "back"].map((r) => rowOutcome(result, "a", "b", r as "front"))).toEqual(["won", "lost", "tied"]);
    expect(["front", "middle", "back"].map((r) => rowOutcome(result, "b", "a", r as "front"))).toEqual(["lost", "won", "tied"]);
    expect(rowOutcome(result, "a", "c", "front")).toBe("");
  });
});
