package contacts.service;

import contacts.entity.Contacts;
import contacts.repository.ContactsRepository;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

@Service
public class ContactsServiceImpl implements ContactsService {

    private static final Logger LOGGER = LoggerFactory.getLogger(ContactsServiceImpl.class);

    // document types
    private static final int ID_CARD = 1;
    private static final int PASSPORT = 2;
    private static final int OTHER = 3;

    /** 18-character resident identity card number: 17 digits and a check digit or X. */
    private static final Pattern ID_CARD_NUMBER = Pattern.compile("^[0-9]{17}[0-9X]$");
    private static final Pattern PASSPORT_NUMBER = Pattern.compile("^[A-Z0-9]{6,12}$");
    private static final int[] ID_WEIGHTS = {7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2};
    private static final char[] ID_CHECK = {'1', '0', 'X', '9', '8', '7', '6', '5', '4', '3', '2'};

    /** An account may keep at most this many passengers. */
    private static final int MAX_CONTACTS_PER_ACCOUNT = 15;

    @Autowired
    private ContactsRepository contactsRepository;

    @Override
    public Response findContactsById(UUID id, HttpHeaders headers) {
        Contacts contacts = contactsRepository.findById(id);
        if (contacts == null) {
            return new Response<>(0, "No contacts according to contacts id", null);
        }
        return new Response<>(1, "Success", contacts);
    }

    @Override
    public Response findContactsByAccountId(UUID accountId, HttpHeaders headers) {
        ArrayList<Contacts> arr = contactsRepository.findByAccountId(accountId);
        return new Response<>(1, "Success", arr);
    }

    @Override
    public Response getAllContacts(HttpHeaders headers) {
        List<Contacts> contacts = contactsRepository.findAll();
        if (contacts == null || contacts.isEmpty()) {
            return new Response<>(0, "No content", null);
        }
        return new Response<>(1, "Success", contacts);
    }

    @Override
    public Response create(Contacts addContacts, HttpHeaders headers) {
        String problem = checkDocument(addContacts.getDocumentType(), addContacts.getDocumentNumber());
        if (problem != null) {
            return new Response<>(0, problem, null);
        }
        ArrayList<Contacts> accountContacts = contactsRepository.findByAccountId(addContacts.getAccountId());
        if (accountContacts.size() >= MAX_CONTACTS_PER_ACCOUNT) {
            return new Response<>(0, "Too many contacts for this account", null);
        }
        for (Contacts c : accountContacts) {
            if (c.getDocumentType() == addContacts.getDocumentType()
                    && c.getDocumentNumber().equals(addContacts.getDocumentNumber())) {
                LOGGER.info("[create] duplicate document for account {}", addContacts.getAccountId());
                return new Response<>(0, "Contacts already exists", null);
            }
        }
        Contacts contacts = new Contacts();
        contacts.setId(UUID.randomUUID());
        contacts.setAccountId(addContacts.getAccountId());
        contacts.setName(addContacts.getName());
        contacts.setDocumentType(addContacts.getDocumentType());
        contacts.setDocumentNumber(addContacts.getDocumentNumber());
        contacts.setPhoneNumber(addContacts.getPhoneNumber());
        contactsRepository.save(contacts);
        return new Response<>(1, "Create contacts success", contacts);
    }

    String checkDocument(int type, String number) {
        if (number == null) {
            return "Document number is required";
        }
        switch (type) {
            case ID_CARD:
                if (!ID_CARD_NUMBER.matcher(number).matches()) {
                    return "ID card number must have 18 characters";
                }
                int sum = 0;
                for (int i = 0; i < 17; i++) {
                    sum += (number.charAt(i) - '0') * ID_WEIGHTS[i];
                }
                return ID_CHECK[sum % 11] == number.charAt(17) ? null : "ID card check digit is wrong";
            case PASSPORT:
                return PASSPORT_NUMBER.matcher(number).matches() ? null : "Malformed passport number";
            case OTHER:
                return number.trim().isEmpty() ? "Document number is required" : null;
            default:
                return "Unknown document type " + type;
        }
    }
}
