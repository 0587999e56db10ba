package hipstershop;

import com.google.common.collect.ImmutableListMultimap;
import hipstershop.Demo.Ad;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The ad inventory, indexed by the product categories of products.json. Context keys sent
 * by the frontend are a product's categories (product page) or nothing (home page).
 */
final class AdCatalog {

  /** How many ads one response carries when no category matched. */
  static final int MAX_ADS_TO_SERVE = 2;

  /** Context keys longer than this are ignored rather than looked up. */
  static final int MAX_CONTEXT_KEY_LENGTH = 64;

  private static final ImmutableListMultimap<String, Ad> ADS_BY_CATEGORY = createAdsMap();

  private final Random random;

  AdCatalog(Random random) {
    this.random = random;
  }

  /** Ads for one category, or an empty collection for an unknown one. */
  Collection<Ad> getAdsByCategory(String category) {
    if (category == null || category.length() > MAX_CONTEXT_KEY_LENGTH) {
      return Collections.emptyList();
    }
    return ADS_BY_CATEGORY.get(category.trim().toLowerCase(Locale.ROOT));
  }

  /** MAX_ADS_TO_SERVE ads drawn at random (with replacement) from the whole inventory. */
  List<Ad> getRandomAds() {
    List<Ad> ads = new ArrayList<>(MAX_ADS_TO_SERVE);
    List<Ad> allAds = ADS_BY_CATEGORY.values().asList();
    for (int i = 0; i < MAX_ADS_TO_SERVE; i++) {
      ads.add(allAds.get(random.nextInt(allAds.size())));
    }
    return ads;
  }

  int size() {
    return ADS_BY_CATEGORY.size();
  }

  private static ImmutableListMultimap<String, Ad> createAdsMap() {
    Ad hairdryer =
        Ad.newBuilder()
            .setRedirectUrl("/product/2ZYFJ3GM2N")
            .setText("Hairdryer for sale. 50% off.")
            .build();
    Ad tankTop =
        Ad.newBuilder()
            .setRedirectUrl("/product/66VCHSJNUP")
            .setText("Tank top for sale. 20% off.")
            .build();
    Ad candleHolder =
        Ad.newBuilder()
            .setRedirectUrl("/product/0PUK6V6EV0")
            .setText("Candle holder for sale. 30% off.")
            .build();
    Ad bambooGlassJar =
        Ad.newBuilder()
            .setRedirectUrl("/product/9SIQT8TOJO")
            .setText("Bamboo glass jar for sale. 10% off.")
            .build();
    Ad watch =
        Ad.newBuilder()
            .setRedirectUrl("/product/1YMWWN1N4O")
            .setText("Watch for sale. Buy one, get second kit for free")
            .build();
    Ad mug =
        Ad.newBuilder()
            .setRedirectUrl("/product/6E92ZMYYFZ")
            .setText("Mug for sale. Buy two, get third one for free")
            .build();
    Ad loafers =
        Ad.newBuilder()
            .setRedirectUrl("/product/L9ECAV7KIM")
            .setText("Loafers for sale. Buy one, get second one for free")
            .build();
    return ImmutableListMultimap.<String, Ad>builder()
        .putAll("clothing", tankTop)
        .putAll("accessories", watch)
        .putAll("footwear", loafers)
        .putAll("hair", hairdryer)
        .putAll("decor", candleHolder)
        .putAll("kitchen", bambooGlassJar, mug)
        .build();
  }
}
