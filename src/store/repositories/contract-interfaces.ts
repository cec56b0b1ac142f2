// Smart contract interfaces (ABIs and IDLs). SQL for the `smart_contract_interfaces` table
// (docs/reference/organizations.md; swagger externaldatav1SmartContractInterface).
import type { Kysely, Selectable } from 'kysely';
import type { Database, SmartContractInterfaceTable } from '../schema.js';

export type SmartContractInterfaceRow = Selectable<SmartContractInterfaceTable>;

export class ContractInterfacesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SmartContractInterfaceRow): Promise<void> {
    await this.db.insertInto('smart_contract_interfaces').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<SmartContractInterfaceRow | undefined> {
    return this.db
      .selectFrom('smart_contract_interfaces')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Every interface of the organization, oldest first. */
  async list(organizationId: string): Promise<SmartContractInterfaceRow[]> {
    return this.db
      .selectFrom('smart_contract_interfaces')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Interfaces of one type uploaded for `address` (compared exactly, as stored), newest first. */
  async forAddress(organizationId: string, address: string, type: string): Promise<SmartContractInterfaceRow[]> {
    return this.db
      .selectFrom('smart_contract_interfaces')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('address', '=', address)
      .where('type', '=', type)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.db.deleteFrom('smart_contract_interfaces').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }
}
