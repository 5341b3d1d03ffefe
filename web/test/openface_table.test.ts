// The open-face table page's pure parts (web/src/table/openFaceStreet.ts): a street's placement
// with the board's room, Pineapple's discard, a Fantasyland hand of 14, the dead-hand warning,
// the keys, the cards still to place and each row's royalty.
import { describe, expect, it } from "vitest";
import { parseCards } from "../src/cards";
import { StreetPlan, deadRows, emptyRows, ofcRules, royaltiesOf, spotForKey, streetDiscards, toPlace } from "../src/table/openFaceStreet";

const c = parseCards;

describe("table/openFaceStreet", () => {
  it("places a first street of five with the rows' capacities", () => {
    const dealt = c("As Ad Kc Kd Qh");
    const p = new StreetPlan(emptyRows(), dealt, 0);
    expect(p.room("front")).toBe(3);
    for (const card of dealt.slice(0, 3)) expect(p.put(card, "front")).toBe(true);
    expect(p.put(dealt[3]!, "front")).toBe(false);
    expect(p.put(dealt[3]!, "middle")).toBe(true);
    expect(p.complete()).toBe(false);
    expect(p.put(dealt[4]!, "discard")).toBe(false); // the first street discards nothing
    p.put(dealt[4]!, "back");
    expect(p.complete()).toBe(true);
    expect(p.placement()).toEqual({ front: c("As Ad Kc"), middle: c("Kd"), back: c("Qh") });
    p.take(dealt[0]!);
    expect(p.unplaced()).toEqual(c("As"));
    expect(p.complete()).toBe(false);
  });
  it("counts what the board already holds and refuses cards not dealt", () => {
    const board = { front: c("2c 3c 4c"), middle: c("5c 6c 7c 8c"), back: c("9c Tc") };
    const p = new StreetPlan(board, c("Ah Kh Qh"), 1);
    expect(p.room("front")).toBe(0);
    expect(p.room("middle")).toBe(1);
    expect(p.put(c("2d")[0]!, "back")).toBe(false);
    expect(p.put(c("Ah")[0]!, "front")).toBe(false);
    p.put(c("Ah")[0]!, "middle");
    p.put(c("Kh")[0]!, "back");
    expect(p.room("back")).toBe(0); // two placed: the third card can only be discarded
    expect(p.put(c("Qh")[0]!, "back")).toBe(false);
    expect(p.complete()).toBe(false); // Pineapple: one discard still to choose
    p.put(c("Qh")[0]!, "discard");
    expect(p.complete()).toBe(true);
    expect(p.discarded()).toEqual(c("Qh"));
    expect(p.placement()).toEqual({ front: [], middle: c("Ah"), back: c("Kh") });
    expect(p.after().middle).toEqual(c("5c 6c 7c 8c Ah"));
  });
  it("fills in order, back first and the discard last; a Fantasyland hand of 14 leaves one off", () => {
    const street = new StreetPlan({ front: [], middle: c("2c 3c 4c"), back: c("5c 6c 7c 8c") }, c("Ah Kh Qh"), 1);
    street.fill();
    expect(street.placement()).toEqual({ front: [], middle: c("Kh"), back: c("Ah") });
    expect(street.discarded()).toEqual(c("Qh"));
    const dealt = c("As Ad Ac Kc Kd Kh Qh Qs Jh Jd Tc 9c 8c 2d");
    const p = new StreetPlan(emptyRows(), dealt, dealt.length - 13);
    p.fill();
    expect(p.complete()).toBe(true);
    expect(p.placement().back).toEqual(dealt.slice(0, 5));
    expect(p.placement().middle).toEqual(dealt.slice(5, 10));
    expect(p.placement().front).toEqual(dealt.slice(10, 13));
    expect(p.discarded()).toEqual(c("2d"));
    p.clear();
    expect(p.unplaced()).toHaveLength(14);
  });
  it("warns of a dead hand once two neighbouring rows are full and out of order", () => {
    expect(deadRows({ front: c("As Ad 2c"), middle: c("Kc Qd 9h 7s 3c"), back: [] })).toBe(true);
    expect(deadRows({ front: c("As Ad 2c"), middle: c("Kc Kd Kh 7s 3c"), back: [] })).toBe(false);
    expect(deadRows({ front: c("As Ad"), middle: c("Kc Qd 9h 7s 3c"), back: [] })).toBe(false); // the front still filling
    expect(deadRows({ front: [], middle: c("Kc Kd 9h 7s 3c"), back: c("Ac Qd Jh 8s 4c") })).toBe(true);
    expect(deadRows({ front: c("2c 3d 4h"), middle: c("5c 5d 9h 7s 3c"), back: c("Ac Ad Jh Js 4c") })).toBe(false);
  });
  it("reads keys, the street's discards and the cards still to place", () => {
    expect(spotForKey("1")).toBe("front");
    expect(spotForKey("M")).toBe("middle");
    expect(spotForKey("3")).toBe("back");
    expect(spotForKey("x")).toBe("discard");
    expect(spotForKey("q")).toBeUndefined();
    expect(streetDiscards(0, 1)).toBe(0);
    expect(streetDiscards(2, 1)).toBe(1);
    const board = { front: c("2c"), middle: c("5c"), back: [] };
    expect(toPlace(c("2c 5c 9d Th Js"), board, c("9d"))).toEqual(c("Th Js"));
  });
  it("gives each row its royalty, none to a dead hand or a row still filling", () => {
    const rules = ofcRules({ streetCards: [5, 1, 1, 1, 1, 1, 1, 1, 1], royaltyTable: "american", middleTripsRoyalty: 2, streetDiscards: 0, scoopPoints: 3, twoOfThreePoints: 1, finnishTwoOfSpades: "", middleRow: "" });
    const rows = { front: c("Qs Qd 2c"), middle: c("4c 4d 4h 9s 2d"), back: c("2h 3h 4s 5d 6c") };
    expect(royaltiesOf(rows, false, rules)).toEqual({ front: 7, middle: 2, back: 2 });
    expect(royaltiesOf(rows, true, rules)).toEqual({ front: 0, middle: 0, back: 0 });
    expect(royaltiesOf({ ...rows, back: c("2h 3h") }, false, rules).back).toBe(0);
  });
  it("gives a 2-7 lowball middle no royalty (rules.md §8.12), as the scoring does", () => {
    const rules = ofcRules({ streetCards: [5, 3, 3, 3, 3], royaltyTable: "american", middleTripsRoyalty: 2, streetDiscards: 1, scoopPoints: 6, twoOfThreePoints: 1, finnishTwoOfSpades: "", middleRow: "deuce_to_seven" });
    const rows = { front: c("Qs Qd 2c"), middle: c("4c 4d 4h 9s 2d"), back: c("2h 3h 4s 5d 6c") };
    expect(royaltiesOf(rows, false, rules)).toEqual({ front: 7, middle: 0, back: 2 });
  });
});
