// Roles and the order in which they grant access (DESIGN.md, "Roles").
export const orgRoles = [
  'member',
  'reader',
  'writer',
  'admin',
  'c2_customer_support',
  'owner',
  'c2_superadmin',
] as const;
export type OrgRole = (typeof orgRoles)[number];
export const platformRoles = ['c2_superadmin', 'c2_customer_support'] as const;
export type PlatformRole = (typeof platformRoles)[number];

/**
 * The minimum role a procedure declares. `none`: no authentication (health). `any`: any
 * authenticated caller, no organization needed. `c2_superadmin`: platform operators only.
 * The rest: that role or higher in the organization named by the input's organizationId.
 */
export const minRoles = [
  'none',
  'any',
  'member',
  'reader',
  'writer',
  'admin',
  'owner',
  'c2_superadmin',
] as const;
export type MinRole = (typeof minRoles)[number];

/** reader and member both read; c2_customer_support acts as admin. */
const rank: Record<OrgRole, number> = {
  member: 1,
  reader: 1,
  writer: 2,
  admin: 3,
  c2_customer_support: 3,
  owner: 4,
  c2_superadmin: 5,
};

export function roleRank(role: OrgRole): number {
  return rank[role];
}

export function roleSatisfies(role: OrgRole, min: OrgRole): boolean {
  return rank[role] >= rank[min];
}

/** The role a platform operator holds in any organization. */
export function platformRoleInOrg(platformRole: PlatformRole | null): OrgRole | null {
  if (platformRole === 'c2_superadmin') return 'c2_superadmin';
  if (platformRole === 'c2_customer_support') return 'c2_customer_support';
  return null;
}

/** The higher of two roles (null counts as no role). */
export function higherRole(a: OrgRole | null, b: OrgRole | null): OrgRole | null {
  if (a === null) return b;
  if (b === null) return a;
  return rank[a] >= rank[b] ? a : b;
}
