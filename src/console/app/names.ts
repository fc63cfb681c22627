// Members by name: the pages that show who made or ended something (keys, policy versions, the
// audit trail) name the member by email. A member who has left shows as their id.
import { api } from "./api.ts";
import { useLoad } from "./ui.tsx";

export function useMemberNames(me: string): (memberId: string | null) => string {
  const members = useLoad(() => api<{ members: { member_id: string; email: string }[] }>("GET", "/customer/members"));
  const emailOf = new Map((members.data?.members ?? []).map((m) => [m.member_id, m.email]));
  return (id) => (id === null ? "—" : id === me ? "you" : (emailOf.get(id) ?? id));
}
