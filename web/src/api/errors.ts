// A refusal's reason (google.rpc.ErrorInfo.reason, docs/api.md "Errors") read from a ConnectError.
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { ConnectError } from "@connectrpc/connect";

export interface Refusal {
  code: string;
  reason: string;
  message: string;
}

/** ErrorInfo's reason (field 1) from its wire bytes; "" when it has none. */
export function errorInfoReason(bytes: Uint8Array): string {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) return reader.string();
    reader.skip(wireType);
  }
  return "";
}

/** What a failed call says: its code, ErrorInfo reason ("" if none) and message. */
export function refusal(error: unknown): Refusal {
  const e = ConnectError.from(error);
  let reason = "";
  for (const d of e.details) {
    if ("type" in d && d.type === "google.rpc.ErrorInfo" && "value" in d) reason = errorInfoReason(d.value);
  }
  return { code: String(e.code), reason, message: e.rawMessage };
}
