// The entity values a decision may read (docs/api.md, "Entities"): pure types, no I/O.
export type Scalar = string | number | boolean;
export type AttributeValue = Scalar | Scalar[];
export type EntityRef = { type: string; id: string };
export type EntityRecord = { type: string; id: string; attributes: Record<string, AttributeValue>; parents?: EntityRef[]; version: number };
