import { describe, expect, it } from "vitest";
import { parseCards } from "../src/cards";
import { foulReason } from "../src/rules";
import { Arrangement, handName, partialName } from "../src/table/arrange";
import { suggestRows } from "../src/table/hint";
import { StatusLine } from "../src/table/statusLine";

const HAND = parseCards("As Ad Kc Kd Qh Jh Th 9h 2h 5c 6d 7s 8s");

describe("table/arrange", () => {
  it("names hands", () => {
    expect(handName(parseCards("Ks Kd 2c"))).toBe("pair of kings");
    expect(handName(parseCards("Ah Kh Qh Jh Th"))).toBe("royal flush");
    expect(handName(parseCards("2c 2d 3h 3s 3c"))).toBe("full house, 3s full of 2s");
    expect(handName(parseCards("9c 7d 5h 3s 2c"))).toBe("high card 9");
    expect(handName(parseCards("9c 7d"))).toBe("");
  });
  it("names a row still filling", () => {
    expect(partialName(parseCards("8s 8d 2c"))).toBe("pair of 8s so far");
    expect(partialName(parseCards("8s 8d 2c 2d"))).toBe("two pair, 8s and 2s so far");
    expect(partialName(parseCards("Qs 3d"))).toBe("high card queen so far");
    expect(partialName([])).toBe("");
  });
  it("moves cards between hand and rows, refusing a full row", () => {
    const a = new Arrangement(HAND);
    for (const c of HAND.slice(0, 3)) expect(a.put(c, "front")).toBe(true);
    expect(a.put(HAND[3]!, "front")).toBe(false);
    expect(a.hand()).toHaveLength(10);
    a.put(HAND[0]!, undefined);
    expect(a.row("front")).toHaveLength(2);
    expect(a.complete()).toBe(false);
  });
  it("warns of a foul as soon as two full rows are out of order", () => {
    const a = new Arrangement(HAND);
    for (const c of parseCards("As Ad 2h")) a.put(c, "front");
    for (const c of parseCards("5c 6d 7s 8s Kc")) a.put(c, "middle");
    expect(a.foul()).toBe("the middle row is weaker than the front row");
  });
});

describe("table/hint", () => {
  // Two exhaustive searches (72,072 splits each): about 1.5 s, but past Vitest's 5 s default on a
  // loaded 2-core machine (6.6 s seen at load 28), so a longer limit.
  it("suggests legal rows of the hand's cards", { timeout: 30_000 }, () => {
    for (const hand of [HAND, parseCards("2c 3d 4h 5s 7c 8d 9h Js Qc Kd Ah 6s Td")]) {
      const rows = suggestRows(hand);
      expect(foulReason(rows, hand, {})).toBeNull();
    }
  });
});

describe("table/statusLine", () => {
  function line(): { shown: string[]; board: { deal: number }; status: StatusLine } {
    const shown: string[] = [];
    const board = { deal: 0 };
    return { shown, board, status: new StatusLine((text) => shown.push(text), () => board.deal) };
  }
  it("does not show a deal's words once a later deal's board is up", () => {
    const { shown, board, status } = line();
    board.deal = 1;
    status.sayOfDeal(1, "Committing your rows…");
    board.deal = 2; // the next hand came before the commit's answer
    status.boardFor(2);
    status.sayOfDeal(1, "Committed and confirmed: waiting for the other seats.");
    expect(shown).toEqual(["Committing your rows…", ""]);
  });
  it("clears a deal's words when the next board goes up, but not words about no deal", () => {
    const { shown, board, status } = line();
    board.deal = 3;
    status.sayOfDeal(3, "You play this deal.");
    status.boardFor(3); // the same deal's board drawn again
    board.deal = 4;
    status.boardFor(4);
    status.say("The operator voided deal 4.");
    board.deal = 5;
    status.boardFor(5);
    status.sayOfDeal(5, "Asking the server's solver for rows…");
    expect(shown).toEqual(["You play this deal.", "", "The operator voided deal 4.", "Asking the server's solver for rows…"]);
  });
});
