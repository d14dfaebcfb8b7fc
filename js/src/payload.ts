// Unpacking what an offline page carries (tfprof_nb.offline.payload.pack and
// tfprof_nb.offline.loader.esm_b64 write it): base64 text of deflated bytes, a widget's state
// or a timeline's detail rows with their binary buffers, and a view's ES module.
import { detailsBlock, type DetailsBlock } from "./details";

/** Bytes of a base64 string. */
export function fromBase64(b64: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  const clean = b64.replace(/\s+/g, "");
  if (native) return native(clean);
  const bin = atob(clean);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function inflate(bytes: Uint8Array): Promise<ArrayBuffer> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream("deflate"));
  return await new Response(stream).arrayBuffer();
}

/** Put each buffer back at its path in `obj` (what a widget manager does with a state's
 * `buffer_paths`). */
export function putBuffers(obj: any, paths: (string | number)[][], buffers: DataView[]): void {
  paths.forEach((path, i) => {
    let node = obj;
    for (const key of path.slice(0, -1)) node = node[key];
    node[path[path.length - 1]] = buffers[i];
  });
}

/**
 * Unpack a blob written by tfprof_nb.offline.payload.pack: deflated, a little-endian uint32
 * header length, the JSON header (`data`, and for each buffer its path in `data` and its
 * [offset, length] in `places`), then the buffers, 8-byte aligned. Returns `data` with every
 * buffer back in its place, as a DataView.
 */
export async function unpackBlob(b64: string): Promise<any> {
  const buf = await inflate(fromBase64(b64));
  const headerLength = new DataView(buf).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, headerLength)));
  const base = 4 + headerLength;
  const views = (header.places as [number, number][]).map(([o, n]) => new DataView(buf, base + o, n));
  putBuffers(header, (header.paths as (string | number)[][]).map((p) => ["data", ...p]), views);
  return header.data;
}

/** A widget's state from its packed payload: JSON traits, binary buffers as DataViews. */
export async function unpack(b64: string): Promise<Record<string, unknown>> {
  return (await unpackBlob(b64)).state;
}

/** A timeline's detail rows from their packed blob. */
export async function unpackDetails(b64: string): Promise<DetailsBlock> {
  return detailsBlock(await unpackBlob(b64));
}

/** A module's source from its base64 text (deflated). */
export async function moduleSource(b64: string): Promise<string> {
  return new TextDecoder().decode(new Uint8Array(await inflate(fromBase64(b64))));
}
